import Foundation
import StoreChain

/// The system clock moved forward on demand, so the demo can show what happens hours later
/// (expiry, stale-while-revalidate) without waiting.
final class ShiftedClock: StoreClock {
    private let offset = Locked<TimeInterval>(0)

    var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    func advance(by duration: Duration) {
        offset.withLock { $0 += duration.timeInterval }
    }

    func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSince(now)
        if seconds > 0 { try await Task.sleep(for: .milliseconds(Int64(seconds * 1_000))) }
    }
}
