import Synchronization

/// Fans change events out to every subscriber. Each subscriber gets its own stream, buffered, so a
/// slow observer never blocks a publisher.
public final class EventHub: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<ChangeEvent>.Continuation] = [:]
        /// Events published so far.
        var published = 0
    }

    private let state = Watched(State())
    private let nextID = Atomic<Int>(0)

    /// A hub with no subscribers.
    public init() {}

    /// A stream of every event published from now on, until the stream is dropped or the hub
    /// is finished.
    public func subscribe() -> AsyncStream<ChangeEvent> {
        subscription().stream
    }

    /// A stream of every event published from now on, a function that ends it, and how many
    /// events were published before it (its events are the ones counted after that). The hub
    /// holds the stream's continuation, so a subscriber that stops reading without cancelling
    /// its task stays subscribed (and buffers every event) until it calls `end`.
    func subscription() -> (stream: AsyncStream<ChangeEvent>, end: @Sendable () -> Void, publishedBefore: Int) {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeEvent.self)
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        let publishedBefore = state.withLock { state in
            state.subscribers[id] = continuation
            return state.published
        }
        return (stream, { continuation.finish() }, publishedBefore)
    }

    /// Sends `event` to every subscriber.
    public func publish(_ event: ChangeEvent) {
        let continuations = state.withLock { state in
            state.published += 1
            return Array(state.subscribers.values)
        }
        for continuation in continuations { continuation.yield(event) }
    }

    /// How many events were published so far.
    var publishedCount: Int {
        state.withLock { $0.published }
    }

    /// Ends every subscriber's stream.
    package func finish() {
        let continuations = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    /// How many subscribers are listening (for tests and diagnostics).
    package var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Returns once at most `count` subscribers are listening (for tests; see `Watched.wait`).
    package func waitForSubscribers(atMost count: Int) async throws {
        try await state.wait(for: "at most \(count) subscribers of the change events") { $0.subscribers.count <= count }
    }
}
