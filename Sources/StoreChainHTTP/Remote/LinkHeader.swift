import Foundation
import StoreChain

/// RFC 8288 `Link` headers: `<https://api.example/bands?page=2>; rel="next", <…>; rel="last"`.
public enum LinkHeader {
    /// One link: its target and its relation types.
    public struct Link: Sendable, Hashable {
        /// The target URL, as written between `<` and `>`.
        public let url: String
        /// The relation types of `rel` (`next`, `last`), in lower case.
        public let relations: [String]
    }

    /// Every link in the header.
    ///
    /// - Throws: `.badRecord` saying where the header is malformed.
    public static func parse(_ header: String) throws(StoreChainError) -> [Link] {
        var links: [Link] = []
        var rest = Substring(header)
        while true {
            rest = rest.drop { $0 == " " || $0 == "," }
            if rest.isEmpty { return links }
            guard rest.first == "<", let close = rest.firstIndex(of: ">") else {
                throw malformed(header, "expected '<url>'")
            }
            let url = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
            var relations: [String] = []
            while true {
                rest = rest.drop { $0 == " " }
                guard rest.first == ";" else { break }
                rest = rest.dropFirst().drop { $0 == " " }
                guard let equals = rest.firstIndex(of: "=") else {
                    throw malformed(header, "expected name=value after ';'")
                }
                let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                rest = rest[rest.index(after: equals)...].drop { $0 == " " }
                let value: String
                if rest.first == "\"" {
                    guard let end = rest.dropFirst().firstIndex(of: "\"") else {
                        throw malformed(header, "unterminated quoted value")
                    }
                    value = String(rest[rest.index(after: rest.startIndex)..<end])
                    rest = rest[rest.index(after: end)...]
                } else {
                    let end = rest.firstIndex { $0 == ";" || $0 == "," || $0 == " " } ?? rest.endIndex
                    value = rest[..<end].trimmingCharacters(in: .whitespaces)
                    rest = rest[end...]
                }
                if name == "rel" { relations += value.split(separator: " ").map { $0.lowercased() } }
            }
            links.append(Link(url: url, relations: relations))
            rest = rest.drop { $0 == " " }
            guard rest.isEmpty || rest.first == "," else { throw malformed(header, "expected ',' between links") }
        }
    }

    /// The URL of the link with `rel="next"`, if any.
    public static func next(in header: String?) throws(StoreChainError) -> String? {
        try url(relation: "next", in: header)
    }

    /// The URL of the first link with the relation `relation` (lower case), if any.
    public static func url(relation: String, in header: String?) throws(StoreChainError) -> String? {
        guard let header, !header.isEmpty else { return nil }
        return try parse(header).first { $0.relations.contains(relation) }?.url
    }

    private static func malformed(_ header: String, _ problem: String) -> StoreChainError {
        StoreChainError(
            .badRecord, "malformed Link header: \(problem)", at: .init(path: "Link: \(header.prefix(120))"),
            suggestion: "the backend's Link header should read <url>; rel=\"next\" (RFC 8288)")
    }
}
