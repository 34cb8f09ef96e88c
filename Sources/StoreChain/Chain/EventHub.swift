import Synchronization

/// What changed: objects inserted, updated, deleted, and entities whose cached queries are no
/// longer valid. Observers re-run the queries an event touches.
public struct ChangeEvent: Sendable, Hashable {
    /// Objects created.
    public var inserted: Set<ObjectID>
    /// Objects whose values or relationships changed.
    public var updated: Set<ObjectID>
    /// Objects that no longer exist.
    public var deleted: Set<ObjectID>
    /// Entities whose query results may have changed.
    public var invalidatedEntities: Set<String>
    /// The new state of inserted and updated objects, when known.
    public var nodes: [Node]
    /// Temporary → permanent IDs, when the event comes from a save.
    public var permanentIDs: [ObjectID: ObjectID]
    /// Who published it (a handler's type name, or "save").
    public var source: String
    /// Objects whose pending changes (a save an outbox acknowledged while the backend was
    /// unreachable) have now reached the backend, under their permanent IDs.
    public var sent: Set<ObjectID>
    /// Objects whose pending changes the backend refused for good: what the app saw of them
    /// optimistically is withdrawn (inserted objects are gone, the others read again).
    public var rejected: Set<ObjectID>
    /// Why the backend refused the `rejected` changes: its error, as text.
    public var rejection: String?
    /// Objects whose pending update met a conflict (someone else changed them first), with the
    /// policy that settled it; `nodes` holds the backend's current object.
    public var resolved: [ObjectID: ConflictPolicy]
    /// The updates of a save an outbox holds, as sent: the attributes and relationships each
    /// sets, not the whole object (`nodes` has no state for them until they reach the backend).
    public var unsentUpdates: [Node]
    /// Changes were made that this event cannot name (the connection that tells of them was
    /// down for a while): anything cached may be out of date, so caches forget what they hold
    /// and every observation refetches.
    public var isGap: Bool
    /// What is cached may be out of date, though nothing is known to have changed (a change feed
    /// stayed down longer than its `max-outage`): caches keep what they hold but make it stale,
    /// so it is revalidated before use (and served stale only where allowed, as on an error),
    /// and every observation refetches.
    public var marksStale: Bool

    /// An event with the given changes; every part is empty unless given.
    public init(
        inserted: Set<ObjectID> = [], updated: Set<ObjectID> = [], deleted: Set<ObjectID> = [],
        invalidatedEntities: Set<String> = [], nodes: [Node] = [], permanentIDs: [ObjectID: ObjectID] = [:],
        source: String, sent: Set<ObjectID> = [], rejected: Set<ObjectID> = [], rejection: String? = nil,
        resolved: [ObjectID: ConflictPolicy] = [:], unsentUpdates: [Node] = [], isGap: Bool = false,
        marksStale: Bool = false
    ) {
        self.marksStale = marksStale
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.invalidatedEntities = invalidatedEntities
        self.nodes = nodes
        self.permanentIDs = permanentIDs
        self.source = source
        self.sent = sent
        self.rejected = rejected
        self.rejection = rejection
        self.resolved = resolved
        self.unsentUpdates = unsentUpdates
        self.isGap = isGap
    }

    /// Every entity the event touches.
    public var entities: Set<String> {
        invalidatedEntities.union(inserted.map(\.entity)).union(updated.map(\.entity)).union(deleted.map(\.entity))
            .union(rejected.map(\.entity))
    }
}

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
