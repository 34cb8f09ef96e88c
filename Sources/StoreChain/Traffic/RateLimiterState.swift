import Foundation

/// Where a `RateLimiter` stands: its limits, requests in flight and waiting, and when the next
/// one may start.
package struct RateLimiterState: Sendable, Hashable {
    package var options: RateLimitOptions
    /// Requests holding an in-flight permit.
    package var inFlight: Int
    /// Requests waiting for a permit.
    package var waiting: Int
    /// How many requests could start now without waiting (0 while paused).
    package var available: Int
    /// The earliest a request asking now may start.
    package var nextStart: Date
    /// Until when the backend asked for a pause (`Retry-After`), while it lasts.
    package var pausedUntil: Date?
    /// What the backend said of its own window (`X-RateLimit-Remaining`, `X-RateLimit-Reset`),
    /// until the window resets.
    package var backendRemaining: Int?
    package var backendReset: Date?
}
