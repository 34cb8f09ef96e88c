import Foundation

/// Where a rate limit's slots are reserved when several processes share one limit (a row in a
/// database all of them reach). `RateLimiter` asks it for every slot; when it fails (the database
/// is down), the limiter goes on limiting this process alone and asks again for the next slot.
///
/// Slots follow the generic cell rate algorithm over one shared "theoretical arrival time": a
/// slot starts at `max(arrival - tolerance, now, pausedUntil)` where `arrival = max(tat, now)`,
/// and then `tat = max(arrival, start) + interval`, in one atomic step. Every process passes the
/// time of its own clock, so their clocks must agree (as NTP keeps them).
public protocol SharedRateLimit: Sendable {
    /// Reserves the next slot; returns when it starts. When it would start after `refuseAfter`
    /// (and after `now`), nothing is reserved and the start is returned all the same.
    func reserve(now: Date, interval: TimeInterval, tolerance: TimeInterval, refuseAfter: Date?) async throws -> Date
    /// Stops every process's requests from starting before `date` (a `Retry-After`).
    func pause(until date: Date) async throws
    /// Lets no slot start before `date` (spreading the requests the backend says remain).
    func delayNextSlot(until date: Date) async throws
}
