import Foundation

/// Where a `RateLimiter` stands: its limits, requests in flight and waiting, and when the next
/// one may start.
public struct RateLimiterState: Sendable, Hashable {
    public var options: RateLimitOptions
    /// Requests holding an in-flight permit.
    public var inFlight: Int
    /// Requests waiting for a permit.
    public var waiting: Int
    /// How many requests could start now without waiting (0 while paused).
    public var available: Int
    /// The earliest a request asking now may start.
    public var nextStart: Date
    /// Until when the backend asked for a pause (`Retry-After`), while it lasts.
    public var pausedUntil: Date?
    /// What the backend said of its own window (`X-RateLimit-Remaining`, `X-RateLimit-Reset`),
    /// until the window resets.
    public var backendRemaining: Int?
    public var backendReset: Date?
}
