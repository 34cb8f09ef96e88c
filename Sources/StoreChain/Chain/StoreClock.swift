import Foundation

/// The time source every time-dependent part of StoreChain takes, so tests can drive time.
///
/// Times are `Date`s because expiry and validators are stored on disk and exchanged with
/// backends; `SystemClock` sleeps on the monotonic clock.
public protocol StoreClock: Sendable {
    /// The current time.
    var now: Date { get }
    /// Suspends until `deadline`, or throws `CancellationError` if the task is cancelled.
    func sleep(until deadline: Date) async throws
}

extension StoreClock {
    /// Suspends for `duration`.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now.addingTimeInterval(duration.timeInterval))
    }
}

/// The real clock.
public struct SystemClock: StoreClock {
    /// The system's clock.
    public init() {}

    /// The current time of day.
    public var now: Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let interval = deadline.timeIntervalSinceNow
        if interval > 0 { try await Task.sleep(for: .seconds(interval)) }
    }
}

extension Duration {
    /// The duration in seconds.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
