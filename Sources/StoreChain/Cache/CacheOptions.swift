/// What the memory and disk caches share: expiry, and how long past expiry an answer may still
/// be given when the backend fails.
public struct CacheOptions: Sendable, Hashable {
    /// When cached answers expire.
    public var expiry: CacheExpiry
    /// How long past its expiry a cached answer may stand in when the backend fails with a
    /// transient error (connection, timeout, 5xx, 429); `nil` never serves stale data on error.
    /// An upper bound: a response's `stale-if-error` may shorten it, and `must-revalidate` or
    /// `no-cache` turn it off for that response.
    public var staleIfError: Duration?
    /// Requests with the default `.useCache` policy behave as `.staleWhileRevalidate(maxStale:)`
    /// with this much: answered at once from a result at most this far past its expiry, and
    /// refreshed in the background. `nil` (the default) leaves them as they are, unless a
    /// response allows it itself (`stale-while-revalidate=N`). An upper bound: a response's
    /// directive may shorten it, and `must-revalidate` or `no-cache` turn it off.
    public var staleWhileRevalidate: Duration?

    /// Options with the given expiry and stale windows (stale-if-error a day by default, no
    /// stale-while-revalidate).
    public init(
        expiry: CacheExpiry = CacheExpiry(), staleIfError: Duration? = .seconds(86_400),
        staleWhileRevalidate: Duration? = nil
    ) {
        self.expiry = expiry
        self.staleIfError = staleIfError
        self.staleWhileRevalidate = staleWhileRevalidate
    }

    /// How long past expiry `freshness` may be served when the backend fails; `nil`: not at all.
    package func staleIfError(for freshness: Freshness) -> Duration? {
        guard let limit = staleIfError else { return nil }
        guard let rules = freshness.rules else { return limit }
        if rules.mustRevalidate { return nil }
        return rules.staleIfError.map { min($0, limit) } ?? limit
    }

    /// How long past expiry `freshness` may be served while it is refreshed in the background,
    /// for requests with the default policy; `nil`: not at all.
    package func staleWhileRevalidate(for freshness: Freshness) -> Duration? {
        guard let rules = freshness.rules else { return staleWhileRevalidate }
        if rules.mustRevalidate { return nil }
        guard let limit = staleWhileRevalidate else { return rules.staleWhileRevalidate }
        return rules.staleWhileRevalidate.map { min($0, limit) } ?? limit
    }
}

extension CacheOptions: Decodable {
    private enum CodingKeys: String, CodingKey {
        case ttl, entityTtl, honourResponseHeaders, heuristic, staleIfError, staleWhileRevalidate
    }

    /// Reads the keys both caches take — `{ ttl: 5m, entity-ttl: { Track: 1h },
    /// honour-response-headers: true, heuristic: false, stale-if-error: 1d,
    /// stale-while-revalidate: 1d }` — from a cache's options; a key left out keeps the default
    /// of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = CacheOptions()
        let expiry = CacheExpiry(
            defaultTTL: try container.decodeIfPresent(TimeSpan.self, forKey: .ttl)?.duration
                ?? defaults.expiry.defaultTTL,
            entityTTL: try container.decodeIfPresent([String: TimeSpan].self, forKey: .entityTtl)?.mapValues(\.duration)
                ?? defaults.expiry.entityTTL,
            honoursResponseHeaders: try container.decodeIfPresent(Bool.self, forKey: .honourResponseHeaders)
                ?? defaults.expiry.honoursResponseHeaders,
            heuristic: try container.decodeIfPresent(Bool.self, forKey: .heuristic) ?? defaults.expiry.heuristic)
        self.init(
            expiry: expiry,
            staleIfError: try container.decodeIfPresent(TimeSpan.self, forKey: .staleIfError)?.duration
                ?? defaults.staleIfError,
            staleWhileRevalidate: try container.decodeIfPresent(TimeSpan.self, forKey: .staleWhileRevalidate)?.duration
                ?? defaults.staleWhileRevalidate)
    }
}
