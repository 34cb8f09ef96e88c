import Foundation
import StoreChain

/// Where a paged endpoint's answers say how its listing goes on: the next page's link, a flag
/// saying more follows, and the listing's whole size, each in a header or at a JSON path in the
/// body. Stock frameworks put them in the body (Django REST Framework's `count` and `next`,
/// JSON:API's `links.next` and `meta`, HAL's `_links.next.href` and `page.totalElements`,
/// OData's `@odata.nextLink` and `@odata.count`, Datasette's `filtered_table_rows_count`,
/// Stripe's `has_more`); GitHub-style APIs in the `Link` and `X-Total-Count` headers, the
/// defaults.
public struct PagingFacts: Sendable, Hashable, Decodable {
    /// Where one fact is.
    public enum Place: Sendable, Hashable, Decodable {
        /// A response header: `Link` (its `rel="next"`), `X-Total-Count`, `Content-Range`
        /// (the size after its `/`), or any header holding the value itself.
        case header(String)
        /// A JSON path in the body: `next`, `links.next`, `meta.pagination.count`; a top-level
        /// key written with dots (`@odata.nextLink`) is read as that key first.
        case body(String)

        /// A JSON path (`links.next`), or `{ header: X-Total-Count }`, or `{ body: next }`.
        public init(from decoder: any Decoder) throws {
            if let path = try? decoder.singleValueContainer().decode(String.self) {
                self = .body(path)
                return
            }
            let (variant, key, container) = try ConfigurationDecoding.variant(
                of: decoder, among: ["body", "header"], what: "place of a paging fact")
            let name = try container.decode(String.self, forKey: key)
            self = variant == "header" ? .header(name) : .body(name)
        }
    }

    /// The next page's URL, absolute or relative to the page's: by default the `Link` header's
    /// `rel="next"`. Declared in the body, a missing or null link ends the listing.
    public var next: Place
    /// A flag that is `true` while more pages follow, when the backend sends one.
    public var hasMore: Place?
    /// The listing's whole size: by default the `X-Total-Count` header.
    public var total: Place

    /// Facts at `next`, `hasMore` and `total`; the defaults are the `Link` and `X-Total-Count`
    /// headers.
    public init(next: Place = .header("Link"), hasMore: Place? = nil, total: Place = .header("X-Total-Count")) {
        self.next = next
        self.hasMore = hasMore
        self.total = total
    }

    private enum Keys: String, CodingKey {
        case next, hasMore, total
    }

    /// The facts written beside a paging style's own options: `{ pages: { page: page, size: 100,
    /// next: next, total: count } }`, `{ link: { next: links.next, total: meta.count } }`,
    /// `{ cursor: { variable: _next, next: next, total: filtered_table_rows_count } }` (where
    /// `next` is the cursor, not a link). A style written as text (`link`) takes the defaults.
    public init(from decoder: any Decoder) throws {
        self.init()
        guard (try? decoder.singleValueContainer().decode(String.self)) == nil else { return }
        let (variant, key, outer) = try ConfigurationDecoding.variant(
            of: decoder, among: ["pages", "cursor", "offset", "link"], what: "paging style")
        guard let container = try? outer.nestedContainer(keyedBy: Keys.self, forKey: key) else { return }
        if variant != "cursor", let next = try container.decodeIfPresent(Place.self, forKey: .next) {
            self.next = next
        }
        hasMore = try container.decodeIfPresent(Place.self, forKey: .hasMore)
        if let total = try container.decodeIfPresent(Place.self, forKey: .total) { self.total = total }
    }
}

extension PagingFacts {
    /// What one page's response says about the pages after it.
    struct Signals {
        /// The next page's link, as written.
        var next: String?
        var hasMore: Bool?
        var total: Int?
        /// The next link is declared in the body, so its absence is the end of the listing.
        var nextIsStated: Bool

        /// Whether another page follows one of `records` records from `start`, asked of
        /// `size`: a next link, a `true` flag or a total above what was read say so; a stated
        /// end (a false flag, a total reached, a body without a next link) says not; else a
        /// full page is taken to have a successor. An empty page is the last.
        func continues(afterRecords records: Int, from start: Int, size: Int) -> Bool {
            guard records > 0 else { return false }
            if next != nil || hasMore == true { return true }
            if let total, start + records < total { return true }
            return !isStated && records >= size
        }

        /// The response says where the listing ends (a flag, a total, or a next link declared in
        /// the body), so the end is not guessed from a short page.
        var isStated: Bool { hasMore != nil || total != nil || nextIsStated }
    }

    /// The facts of one response, `body` its JSON.
    ///
    /// - Throws: `.badRecord` naming the URL and JSON path of a fact of the wrong kind (a next
    ///   link that is a number, a total that is text), or a malformed `Link` header.
    func signals(in response: TransportResponse, body: JSONValue?, source: String) throws(StoreChainError)
        -> Signals
    {
        var signals = Signals(nextIsStated: false)
        switch next {
        case .header(let name) where name.lowercased() == "link":
            signals.next = try LinkHeader.next(in: response[header: name])
        case .header(let name):
            signals.next = response[header: name].flatMap { $0.isEmpty ? nil : $0 }
        case .body(let path):
            signals.nextIsStated = body.map(Self.isObject) ?? false
            switch body.flatMap({ Self.value(at: path, in: $0) }) {
            case nil, .null?: break
            case .string(let link)?: signals.next = link.isEmpty ? nil : link
            case let other?: throw Self.wrongKind(other, "next-page link", "a URL", path: path, source: source)
            }
        }
        switch hasMore {
        case nil: break
        case .header(let name)?:
            signals.hasMore = response[header: name].flatMap { Self.flag($0) }
        case .body(let path)?:
            switch body.flatMap({ Self.value(at: path, in: $0) }) {
            case nil, .null?: break
            case .bool(let more)?: signals.hasMore = more
            case let other?: throw Self.wrongKind(other, "more-pages flag", "true or false", path: path, source: source)
            }
        }
        switch total {
        case .header(let name):
            signals.total = response[header: name].flatMap { Self.headerTotal($0, in: name) }
        case .body(let path):
            switch body.flatMap({ Self.value(at: path, in: $0) }) {
            case nil, .null?: break
            case .integer(let count)? where count >= 0: signals.total = count
            case .string(let text)? where Int(text).map({ $0 >= 0 }) == true: signals.total = Int(text)
            case let other?:
                throw Self.wrongKind(other, "listing's total", "a count of records", path: path, source: source)
            }
        }
        return signals
    }

    /// The value at `path`: a top-level key written with its dots (`@odata.nextLink`), or else a
    /// path through nested objects (`meta.pagination.count`).
    static func value(at path: String, in body: JSONValue) -> JSONValue? {
        if case .object(let fields) = body, let value = fields[path] { return value }
        return JSONPath.value(at: path, in: body)
    }

    private static func isObject(_ body: JSONValue) -> Bool {
        if case .object = body { return true }
        return false
    }

    /// `X-Total-Count: 3503`, or `Content-Range: 0-24/3503` (`*` when unknown).
    private static func headerTotal(_ value: String, in name: String) -> Int? {
        let text = name.lowercased() == "content-range" ? value.split(separator: "/").last.map(String.init) : value
        return text.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    private static func flag(_ value: String) -> Bool? {
        switch value.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "1", "yes": true
        case "false", "0", "no": false
        default: nil
        }
    }

    private static func wrongKind(
        _ value: JSONValue, _ what: String, _ expected: String, path: String, source: String
    ) -> StoreChainError {
        StoreChainError(
            .badRecord, "the \(what) is \(value.typeName), not \(expected)", at: .init(file: source, path: "$.\(path)"),
            suggestion: "point the endpoint's paging option at the field that holds the \(what)")
    }
}
