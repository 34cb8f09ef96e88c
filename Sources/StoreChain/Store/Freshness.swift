import Foundation

/// How fresh a node's values are: when they were fetched, when they expire, and the validators
/// a backend gave for revalidating them.
public struct Freshness: Sendable, Hashable, Codable {
    public var fetchedAt: Date?
    public var expiresAt: Date?
    /// An HTTP `ETag`, for `If-None-Match`.
    public var etag: String?
    /// An HTTP `Last-Modified` value, for `If-Modified-Since`.
    public var lastModified: String?
    /// The validators of every page an answer was read from, so a pager can revalidate it page
    /// by page; empty for an answer that is one document.
    public var pageValidators: [PageValidator]
    /// The freshness rules of the response the values came from, when the cache honours them:
    /// whether they may be served stale, and the lifetime a "not modified" answer renews.
    public var rules: ResponseFreshness? {
        get { storedRules?.value }
        set { storedRules = newValue.map { OutOfLine($0) } }
    }
    /// Out of line: every cached node holds a `Freshness`, and most hits never read the rules.
    private var storedRules: OutOfLine<ResponseFreshness>?

    public init(
        fetchedAt: Date? = nil, expiresAt: Date? = nil, etag: String? = nil, lastModified: String? = nil,
        pageValidators: [PageValidator] = [], rules: ResponseFreshness? = nil
    ) {
        self.fetchedAt = fetchedAt
        self.expiresAt = expiresAt
        self.etag = etag
        self.lastModified = lastModified
        self.pageValidators = pageValidators
        self.storedRules = rules.map { OutOfLine($0) }
    }

    /// Whether there is anything to revalidate with.
    public var hasValidators: Bool { etag != nil || lastModified != nil || !pageValidators.isEmpty }

    private enum CodingKeys: String, CodingKey {
        case fetchedAt, expiresAt, etag, lastModified, pageValidators, rules
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(fetchedAt, forKey: .fetchedAt)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(etag, forKey: .etag)
        try container.encodeIfPresent(lastModified, forKey: .lastModified)
        try container.encode(pageValidators, forKey: .pageValidators)
        try container.encodeIfPresent(rules, forKey: .rules)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            fetchedAt: try container.decodeIfPresent(Date.self, forKey: .fetchedAt),
            expiresAt: try container.decodeIfPresent(Date.self, forKey: .expiresAt),
            etag: try container.decodeIfPresent(String.self, forKey: .etag),
            lastModified: try container.decodeIfPresent(String.self, forKey: .lastModified),
            pageValidators: try container.decodeIfPresent([PageValidator].self, forKey: .pageValidators) ?? [],
            rules: try container.decodeIfPresent(ResponseFreshness.self, forKey: .rules))
    }

    /// Whether the values are still fresh at `now` (no expiry means fresh).
    public func isFresh(at now: Date) -> Bool {
        expiresAt.map { now < $0 } ?? true
    }

    /// The same, stale from `now` on at the latest (an expiry already past is kept).
    public func expiring(by now: Date) -> Freshness {
        var expired = self
        expired.expiresAt = min(expiresAt ?? now, now)
        return expired
    }
}
