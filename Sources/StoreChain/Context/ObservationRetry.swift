/// When an observation tries again a refetch that failed transiently (the backend out of
/// reach): after a second, then twice as long each time, up to a minute, on the chain's clock,
/// until a refetch succeeds. Without it, a change made while the backend was down stayed
/// unseen once it was back, until the next change.
struct ObservationRetry {
    static let first = Duration.seconds(1)
    static let longest = Duration.seconds(60)

    let clock: any StoreClock
    let refetch: AsyncStream<Void>.Continuation
    /// How long after the next failure the refetch is tried again.
    private(set) var delay = Self.first
    private var pending: Task<Void, Never>?

    init(clock: any StoreClock, refetch: AsyncStream<Void>.Continuation) {
        self.clock = clock
        self.refetch = refetch
    }

    /// A refetch failed: it is tried again after `delay`, which then doubles.
    mutating func failed() {
        pending?.cancel()
        let (clock, refetch, delay) = (clock, refetch, delay)
        pending = Task {
            do {
                try await clock.sleep(for: delay)
                refetch.yield()
            } catch {}
        }
        self.delay = min(delay * 2, Self.longest)
    }

    /// A refetch succeeded (or the observation ended): no retry is due.
    mutating func succeeded() {
        pending?.cancel()
        pending = nil
        delay = Self.first
    }
}
