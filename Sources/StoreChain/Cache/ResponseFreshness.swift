/// What a response says about its own freshness, as the terminal that received it read it from
/// its protocol (for HTTP: `HTTPFreshness`, following RFC 9111 and RFC 5861). Caches combine it
/// with their options (`CacheExpiry`) and know nothing of header syntax.
public struct ResponseFreshness: Sendable, Hashable, Codable {
    /// The response must not be kept (`no-store`); what a cache kept for its request is dropped.
    public var noStore: Bool
    /// How long the response is fresh from when it was generated (`max-age`, `Expires` − `Date`);
    /// `nil` when it gives no explicit freshness.
    public var lifetime: Duration?
    /// How long the response is fresh when it gives no explicit freshness and a cache asks for
    /// RFC 9111's heuristic (a tenth of the time since `Last-Modified`); `nil` when it cannot say.
    public var heuristicLifetime: Duration?
    /// How old the response already was when it arrived (the corrected initial age).
    public var age: Duration
    /// Every use must be revalidated first (`no-cache`): stored, but never fresh.
    public var noCache: Bool
    /// Once stale, it may not be used without revalidation, not even when the backend fails
    /// (`must-revalidate`, and `no-cache`).
    public var mustRevalidate: Bool
    /// How long past expiry it may be served while a refresh runs (`stale-while-revalidate=N`).
    public var staleWhileRevalidate: Duration?
    /// How long past expiry it may be served when the backend fails (`stale-if-error=N`).
    public var staleIfError: Duration?
    /// Whether the response carried freshness rules of its own (`Cache-Control` or `Expires`).
    /// A "not modified" answer without them keeps the rules of the response it revalidated.
    public var hasRules: Bool
    /// The response's validators (a strong or weak entity tag, a `Last-Modified` value), for
    /// revalidating it. Not stored with the rules: a cache keeps them in `Freshness.validators`.
    public var validators = Validators()

    private enum CodingKeys: String, CodingKey {
        case noStore, lifetime, heuristicLifetime, age, noCache, mustRevalidate, staleWhileRevalidate, staleIfError
        case hasRules
    }

    /// Freshness rules as a response states them; the HTTP module reads them from its headers.
    public init(
        noStore: Bool = false, lifetime: Duration? = nil, heuristicLifetime: Duration? = nil, age: Duration = .zero,
        noCache: Bool = false, mustRevalidate: Bool = false, staleWhileRevalidate: Duration? = nil,
        staleIfError: Duration? = nil, hasRules: Bool? = nil, validators: Validators = Validators()
    ) {
        self.noStore = noStore
        self.lifetime = lifetime
        self.heuristicLifetime = heuristicLifetime
        self.age = age
        self.noCache = noCache
        self.mustRevalidate = mustRevalidate || noCache
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
        self.hasRules =
            hasRules
            ?? (noStore || lifetime != nil || noCache || mustRevalidate || staleWhileRevalidate != nil
                || staleIfError != nil)
        self.validators = validators
    }

    /// The same rules without validators.
    var withoutValidators: ResponseFreshness {
        var rules = self
        rules.validators = Validators()
        return rules
    }

    /// The rules of a stored response after a "not modified" answer (RFC 9111 §4.3.4): the new
    /// answer's rules and validators where it has them, the stored ones otherwise, and the new
    /// answer's age.
    package func updated(byNotModified answer: ResponseFreshness) -> ResponseFreshness {
        var updated = answer.hasRules ? answer : self
        updated.hasRules = hasRules || answer.hasRules
        updated.age = answer.age
        updated.heuristicLifetime = answer.heuristicLifetime ?? heuristicLifetime
        updated.validators = validators.updated(by: answer.validators)
        return updated
    }

    /// The rules of an answer stitched from `responses` (the pages of a listing), as
    /// `combined(with:)` gives them, even for one response: no validators (each page keeps its
    /// own). `nil` when none has rules.
    package static func combining(_ responses: some Sequence<ResponseFreshness>) -> ResponseFreshness? {
        responses.reduce(nil) { $0?.combined(with: $1) ?? $1 }?.withoutValidators
    }

    /// The rules of an answer stitched from several responses (the pages of a listing): each
    /// rule as strict as the strictest response's, and no validators (each page keeps its own).
    package func combined(with other: ResponseFreshness) -> ResponseFreshness {
        func smaller(_ a: Duration?, _ b: Duration?) -> Duration? {
            guard let a, let b else { return a ?? b }
            return min(a, b)
        }
        // Serving stale is allowed only as far as every response allows it.
        func both(_ a: Duration?, _ b: Duration?) -> Duration? {
            guard let a, let b else { return nil }
            return min(a, b)
        }
        func remaining(_ rules: ResponseFreshness) -> Duration? { rules.lifetime.map { $0 - rules.age } }
        let earlier =
            (remaining(other) ?? .seconds(Int64.max)) < (remaining(self) ?? .seconds(Int64.max)) ? other : self
        return ResponseFreshness(
            noStore: noStore || other.noStore, lifetime: earlier.lifetime,
            heuristicLifetime: smaller(heuristicLifetime, other.heuristicLifetime), age: earlier.age,
            noCache: noCache || other.noCache, mustRevalidate: mustRevalidate || other.mustRevalidate,
            staleWhileRevalidate: both(staleWhileRevalidate, other.staleWhileRevalidate),
            staleIfError: both(staleIfError, other.staleIfError),
            hasRules: hasRules || other.hasRules)
    }
}
