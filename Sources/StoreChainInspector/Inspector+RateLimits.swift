import Foundation
import StoreChain

extension Inspector {
    /// Where each rate limiter in the chain stands.
    struct RateLimitView: Codable {
        var name: String
        /// Requests a second, and how many may start at once.
        var rate: Double
        var burst: Int
        var maxInFlight: Int?
        var inFlight: Int
        var waiting: Int
        /// Requests that could start now without waiting.
        var available: Int
        /// Milliseconds until a request asking now may start (0: at once).
        var nextStartIn: Double
        /// Milliseconds left of a pause the backend asked for.
        var pausedFor: Double?
        /// What the backend said is left of its window, and milliseconds until it resets.
        var backendRemaining: Int?
        var backendResetIn: Double?
    }

    func rateLimitsView() -> [RateLimitView] {
        let now = chain.clock.now
        let milliseconds = { (date: Date) in max(0, date.timeIntervalSince(now) * 1_000) }
        return chain.handlers(of: (any RateLimiting).self).map { handler in
            let state = handler.limiter.snapshot(at: now)
            return RateLimitView(
                name: handler.name, rate: state.options.rate, burst: state.options.burst,
                maxInFlight: state.options.maxInFlight, inFlight: state.inFlight, waiting: state.waiting,
                available: state.available, nextStartIn: milliseconds(state.nextStart),
                pausedFor: state.pausedUntil.map(milliseconds), backendRemaining: state.backendRemaining,
                backendResetIn: state.backendReset.map(milliseconds))
        }
    }
}
