import Foundation

/// What a backend said of its rate limit with an answer (`X-RateLimit-Remaining` and
/// `X-RateLimit-Reset`): how many requests are left in its window and when the window resets.
/// The terminal reads it from the response; `RateLimitHandler` spreads the remaining requests
/// until the reset.
public struct RateLimitStatus: Sendable, Hashable {
    /// When the window resets.
    public enum Reset: Sendable, Hashable {
        /// At this time (GitHub's epoch seconds).
        case at(Date)
        /// This long after the answer arrived (most others).
        case after(Duration)
    }

    /// Requests left in the window.
    public var remaining: Int
    /// When the window starts again.
    public var reset: Reset

    /// What the backend said: `remaining` requests until `reset`.
    public init(remaining: Int, reset: Reset) {
        self.remaining = remaining
        self.reset = reset
    }

    /// When the window resets, for an answer that arrived at `now`.
    package func resetDate(now: Date) -> Date {
        switch reset {
        case .at(let date): date
        case .after(let duration): now.addingTimeInterval(duration.timeInterval)
        }
    }
}
