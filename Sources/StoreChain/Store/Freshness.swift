import Foundation

/// How fresh a node's values are: when they were fetched, when they expire, and the validators
/// a backend gave for revalidating them.
public struct Freshness: Sendable, Hashable, Codable {
    /// When the object or answer was fetched from the backend.
    public var fetchedAt: Date?
    /// When it stops being fresh; `nil`: it has no expiry of its own (the cache's TTL applies).
    public var expiresAt: Date?
    /// What to revalidate the values with: the response's `ETag` and `Last-Modified`, and for an
    /// answer read from several pages, each page's (`Validators.pages`), so a pager can
    /// revalidate it page by page. Empty when there are none.
    public var validators: Validators
    /// The freshness rules of the response the values came from, when the cache honours them:
    /// whether they may be served stale, and the lifetime a "not modified" answer renews.
    public var rules: ResponseFreshness? {
        get { storedRules?.value }
        set { storedRules = newValue.map { OutOfLine($0.withoutValidators) } }
    }
    /// Out of line: every cached node holds a `Freshness`, and most hits never read the rules.
    /// The rules are kept without validators: those are `validators`, in one place.
    private var storedRules: OutOfLine<ResponseFreshness>?

    /// Freshness with the given times, rules and validators.
    public init(
        fetchedAt: Date? = nil, expiresAt: Date? = nil, validators: Validators = Validators(),
        rules: ResponseFreshness? = nil
    ) {
        self.fetchedAt = fetchedAt
        self.expiresAt = expiresAt
        self.validators = validators
        self.storedRules = rules.map { OutOfLine($0.withoutValidators) }
    }

    // The validators are written as three keys of their own, as before they were one type, so
    // that stored freshness reads the same either way.
    private enum CodingKeys: String, CodingKey {
        case fetchedAt, expiresAt, etag, lastModified, pageValidators, rules
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(fetchedAt, forKey: .fetchedAt)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(validators.etag, forKey: .etag)
        try container.encodeIfPresent(validators.lastModified, forKey: .lastModified)
        try container.encode(validators.pages, forKey: .pageValidators)
        try container.encodeIfPresent(rules, forKey: .rules)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            fetchedAt: try container.decodeIfPresent(Date.self, forKey: .fetchedAt),
            expiresAt: try container.decodeIfPresent(Date.self, forKey: .expiresAt),
            validators: Validators(
                etag: try container.decodeIfPresent(String.self, forKey: .etag),
                lastModified: try container.decodeIfPresent(String.self, forKey: .lastModified),
                pages: try container.decodeIfPresent([PageValidator].self, forKey: .pageValidators) ?? []),
            rules: try container.decodeIfPresent(ResponseFreshness.self, forKey: .rules))
    }

    /// Whether the values are still fresh at `now` (no expiry means fresh).
    package func isFresh(at now: Date) -> Bool {
        expiresAt.map { now < $0 } ?? true
    }

    /// The same, stale from `now` on at the latest (an expiry already past is kept).
    package func expiring(by now: Date) -> Freshness {
        var expired = self
        expired.expiresAt = min(expiresAt ?? now, now)
        return expired
    }
}
