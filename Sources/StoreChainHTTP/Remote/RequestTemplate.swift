import Foundation
import StoreChain

/// A request template: `GET /bands/{id}/albums?sort={sort}&format=json`.
///
/// Path variables are required; query variables are left out when they have no value. Every
/// value is percent-encoded, so no value can change the path or add parameters. The template's
/// own text is sent as written, except the characters a URL cannot hold there (a space, `|`,
/// brackets, a `%` that starts no escape, non-ASCII), which are percent-encoded.
public struct RequestTemplate: Sendable, Hashable, CustomStringConvertible {
    /// A piece of a path segment or query value.
    public enum Part: Sendable, Hashable {
        /// Text sent as written (what a URL cannot hold percent-encoded).
        case literal(String)
        /// `{name}`, replaced by the variable's value, percent-encoded.
        case variable(String)
    }

    /// The HTTP method (`GET`, `POST`, `PUT`, `PATCH`, `DELETE`).
    public let method: String
    /// Path segments, each a sequence of literals and variables.
    public let path: [[Part]]
    /// Query items: name and value parts.
    public let query: [(name: String, value: [Part])]
    /// The template as written.
    public let text: String
    /// The path ends with `/` (`GET /genres/{id}/`, `GET /genres/?page={page}`), which is sent
    /// too: a Django backend answers a path without it with a redirect.
    private let endsWithSlash: Bool

    /// Parses `METHOD /path/{var}?name={var}`; throws a located error for a malformed template.
    public init(_ text: String) throws(StoreChainError) {
        self.text = text
        let pieces = text.split(separator: " ", maxSplits: 1).map(String.init)
        guard pieces.count == 2, ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(pieces[0].uppercased()) else {
            throw StoreChainError(
                .invalidRequest, "request template '\(text)' does not start with a method",
                suggestion: "write it as 'GET /path/{variable}?name={variable}'")
        }
        method = pieces[0].uppercased()
        let target = pieces[1].trimmingCharacters(in: .whitespaces)
        let (pathText, queryText) = Self.splitQuery(target)
        endsWithSlash = pathText.hasSuffix("/")
        path = try pathText.split(separator: "/", omittingEmptySubsequences: true).map {
            segment throws(StoreChainError) in
            try Self.parts(String(segment), in: text)
        }
        var query: [(String, [Part])] = []
        for item in queryText.split(separator: "&") where !item.isEmpty {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            query.append((pair[0], try Self.parts(pair.count > 1 ? pair[1] : "", in: text)))
        }
        self.query = query
    }

    public static func == (lhs: RequestTemplate, rhs: RequestTemplate) -> Bool { lhs.text == rhs.text }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }
    public var description: String { text }

    private static func splitQuery(_ target: String) -> (String, String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    private static func parts(_ text: String, in template: String) throws(StoreChainError) -> [Part] {
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw StoreChainError(.invalidRequest, "request template '\(template)' has an unclosed '{'")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard !name.isEmpty else {
                throw StoreChainError(.invalidRequest, "request template '\(template)' has an empty {}")
            }
            parts.append(.variable(name))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        return parts
    }

    /// Variables in the path, which must have values.
    public var pathVariables: [String] {
        path.flatMap { $0 }.compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }

    /// Variables in the query, which may be left out.
    public var queryVariables: [String] {
        query.flatMap(\.value).compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }

    /// Every variable, path variables first.
    public var variables: [String] { pathVariables + queryVariables }

    /// The name of the query item whose whole value is `{variable}` (`page` in `?page={page}`).
    public func queryName(of variable: String) -> String? {
        query.first { $0.value == [.variable(variable)] }?.name
    }

    /// The URL with `values` filled in and percent-encoded; query items whose variables have no
    /// value are left out.
    public func url(base: URL, values: [String: String]) throws(StoreChainError) -> URL {
        var path = base.path.hasSuffix("/") ? String(base.path.dropLast()) : base.path
        for segment in self.path {
            var text = ""
            for part in segment {
                switch part {
                case .literal(let literal): text += Self.escape(literal, keeping: Self.pathCharacters)
                case .variable(let name):
                    guard let value = values[name] else {
                        throw StoreChainError(.invalidRequest, "no value for {\(name)} in '\(self.text)'")
                    }
                    text += Self.encode(value)
                }
            }
            path += "/" + text
        }
        if endsWithSlash { path += "/" }
        var items: [String] = []
        for (name, value) in query {
            var text = ""
            var complete = true
            for part in value {
                switch part {
                case .literal(let literal): text += Self.escape(literal, keeping: Self.queryCharacters)
                case .variable(let variable):
                    guard let value = values[variable] else {
                        complete = false
                        continue
                    }
                    text += Self.encode(value)
                }
            }
            if complete { items.append(Self.escape(name, keeping: Self.queryCharacters) + "=" + text) }
        }
        var components = URLComponents()
        components.scheme = base.scheme
        components.host = base.host
        components.port = base.port
        components.percentEncodedPath = path
        if !items.isEmpty { components.percentEncodedQuery = items.joined(separator: "&") }
        guard let url = components.url else {
            throw StoreChainError(.invalidRequest, "cannot build a URL from '\(self.text)' and base \(base)")
        }
        return url
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// What RFC 3986 lets a path segment hold as it is: unreserved characters, sub-delimiters,
    /// `:` and `@` (`pchar`).
    static let pathCharacters = unreserved.union(CharacterSet(charactersIn: "!$&'()*+,;=:@"))
    /// What a query may hold as it is: a path segment's characters, `/` and `?`.
    private static let queryCharacters = pathCharacters.union(CharacterSet(charactersIn: "/?"))

    /// `text` as written, but for the characters outside `kept` (a `%` that starts no escape
    /// among them), percent-encoded as UTF-8.
    static func escape(_ text: String, keeping kept: CharacterSet) -> String {
        let scalars = Array(text.unicodeScalars)
        var escaped = ""
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "%", index + 2 < scalars.count, scalars[index + 1].properties.isASCIIHexDigit,
                scalars[index + 2].properties.isASCIIHexDigit
            {
                escaped.unicodeScalars.append(contentsOf: scalars[index...(index + 2)])
                index += 3
                continue
            }
            if kept.contains(scalar) {
                escaped.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 {
                    escaped += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
            index += 1
        }
        return escaped
    }
}
