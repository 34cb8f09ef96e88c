import Foundation

/// How long cached data stays fresh: the freshness a response gives itself (`ResponseFreshness`)
/// when the cache honours it, and otherwise a time to live, one per entity.
public struct CacheExpiry: Sendable, Hashable {
    /// The freshness of responses that give none, for entities without their own.
    public var defaultTTL: Duration
    /// Time to live per entity name.
    public var entityTTL: [String: Duration]
    /// Whether a response's own freshness rules (`max-age`, `Expires`, `no-store`, `no-cache`,
    /// `must-revalidate`, …) apply; when off, every response is fresh for the time to live.
    public var honoursResponseHeaders: Bool
    /// Whether a response without explicit freshness but with a `Last-Modified` date is fresh
    /// for a tenth of its age (RFC 9111 §4.2.2) instead of for the time to live.
    public var heuristic: Bool

    /// Expiry rules: `defaultTTL` for answers that carry no freshness of their own, `entityTTL` per
    /// entity in its place, whether response headers (`Cache-Control`, `Expires`) are honoured, and
    /// whether the heuristic freshness of RFC 9111 §4.2.2 applies.
    public init(
        defaultTTL: Duration = .seconds(300), entityTTL: [String: Duration] = [:], honoursResponseHeaders: Bool = true,
        heuristic: Bool = false
    ) {
        self.defaultTTL = defaultTTL
        self.entityTTL = entityTTL
        self.honoursResponseHeaders = honoursResponseHeaders
        self.heuristic = heuristic
    }

    /// The freshness of data of `entity` received at `now` under `rules` (`nil`: the response
    /// gave none), with the response's validators when `validators` is true; `nil` when the data
    /// must not be stored.
    package func freshness(for entity: String, rules: ResponseFreshness?, now: Date, validators: Bool) -> Freshness? {
        let ttl = entityTTL[entity] ?? defaultTTL
        var freshness = Freshness(fetchedAt: now, expiresAt: now.addingTimeInterval(ttl.timeInterval))
        if validators, let rules { freshness.validators = rules.validators }
        guard honoursResponseHeaders, let rules else { return freshness }
        if rules.noStore { return nil }
        let lifetime: Duration =
            if rules.noCache {
                .zero
            } else if let explicit = rules.lifetime {
                explicit
            } else if heuristic, let guess = rules.heuristicLifetime {
                guess
            } else {
                ttl
            }
        freshness.expiresAt = now.addingTimeInterval(max(.zero, lifetime - rules.age).timeInterval)
        freshness.rules = rules
        return freshness
    }

    /// The freshness of stored data that the backend just said is not modified (RFC 9111
    /// §4.3.4): the stored rules, updated by those of the answer, applied from `now`; the
    /// stored validators unless the answer brought new ones. `nil` when the answer says the
    /// data must no longer be stored.
    package func renewed(_ stored: Freshness, of entity: String, by answer: ResponseFreshness?, now: Date)
        -> Freshness?
    {
        var rules = stored.rules
        if let answer { rules = rules?.updated(byNotModified: answer) ?? answer }
        guard var renewed = freshness(for: entity, rules: rules, now: now, validators: false) else { return nil }
        renewed.validators = answer.map { stored.validators.updated(by: $0.validators.document) } ?? stored.validators
        return renewed
    }
}
