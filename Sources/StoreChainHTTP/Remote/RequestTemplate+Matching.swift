import Foundation
import StoreChain

extension RequestTemplate {
    /// The values of the path variables in `url`, when its path is this template's under `base`
    /// (`https://api.example/v1/albums/5/` is `["id": "5"]` for `GET /albums/{id}/` under
    /// `https://api.example/v1`); nil when it is another path. Scheme, host and query are not
    /// compared: a backend behind a proxy may write its own host into the links it sends.
    public func pathValues(of url: URL, base: URL) -> [String: String]? {
        let segments = url.path(percentEncoded: true).split(separator: "/")
        let prefix = base.path(percentEncoded: true).split(separator: "/")
        guard segments.count == prefix.count + path.count, segments.starts(with: prefix) else { return nil }
        var values: [String: String] = [:]
        for (segment, parts) in zip(segments.dropFirst(prefix.count), path) {
            guard Self.match(segment, parts[...], into: &values) else { return nil }
        }
        return values
    }

    /// Whether `text` (a percent-encoded path segment) is `parts`, each variable taking the
    /// shortest value after which the rest matches.
    private static func match(_ text: Substring, _ parts: ArraySlice<Part>, into values: inout [String: String])
        -> Bool
    {
        guard let first = parts.first else { return text.isEmpty }
        switch first {
        case .literal(let literal):
            let written = escape(literal, keeping: pathCharacters)
            guard text.hasPrefix(written) else { return false }
            return match(text.dropFirst(written.count), parts.dropFirst(), into: &values)
        case .variable(let name):
            var end = text.startIndex
            while end < text.endIndex {
                end = text.index(after: end)
                var found = values
                guard match(text[end...], parts.dropFirst(), into: &found) else { continue }
                guard let value = text[..<end].removingPercentEncoding else { return false }
                found[name] = value
                values = found
                return true
            }
            return false
        }
    }
}
