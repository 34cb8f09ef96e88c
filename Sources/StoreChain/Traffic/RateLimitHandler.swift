/// Limits the requests that pass it to a rate, a burst and a number in flight, and obeys the
/// backend: a 429 or 503 with `Retry-After` pauses every request, and `X-RateLimit-Remaining` /
/// `X-RateLimit-Reset` slow requests down before the limit is hit.
///
/// ```swift
/// Chain(terminal: remote) { RateLimitHandler(options: .init(rate: 10, burst: 20)) }
/// ```
///
/// Each handler has its own limiter unless given one to share (`RateLimiter`): share one between
/// chains that talk to the same host to limit per host.
public struct RateLimitHandler: RateLimiting {
    public let name = "rate-limit"
    /// The limiter every request through the handler takes a slot from.
    public let limiter: RateLimiter

    /// A handler with a limiter of its own, for this process alone.
    public init(options: RateLimitOptions) {
        self.init(limiter: RateLimiter(options: options))
    }

    /// A handler over `limiter` (which may be shared by several handlers, or processes).
    public init(limiter: RateLimiter) {
        self.limiter = limiter
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        // A cache-only request never reaches the backend (below the caches the chain refuses it
        // before it gets here; a chain built in Swift may put the limiter above a cache).
        if request.kind != .save, context.effectiveCachePolicy(for: request) == .cacheOnly {
            return try await next(request, context)
        }
        // A sub-request runs inside the permit of the request it serves, which waits for it:
        // taking a second permit could wait forever with `max-in-flight` requests all waiting.
        // A long poll for changes counts towards the rate but holds no permit: it waits on the
        // backend for minutes, and with `max-in-flight: 1` would leave no room for anything else.
        let permit = context.lineage.isEmpty && !request.isLongPoll
        try await limiter.acquire(context: context, permit: permit)
        defer { if permit { limiter.release() } }
        do {
            let response = try await next(request, context)
            await limiter.learn(from: response.info.rateLimit, now: context.clock.now)
            return response
        } catch let error as StoreChainError {
            // The backend (or a limiter below) said when to come back: every request waits.
            if let retryAfter = error.retryAfter, error.code == .rateLimited || error.code == .backendUnavailable {
                await limiter.pause(until: context.clock.now.addingTimeInterval(retryAfter.timeInterval))
            }
            throw error
        }
    }
}
