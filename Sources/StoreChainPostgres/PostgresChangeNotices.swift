import Foundation
import Logging
import PostgresNIO
import StoreChain
import StoreChainSQLite
import Synchronization

/// What one process tells the others sharing a cache schema when it changes what they may hold
/// (a save, a deletion, a refresh that found new data): a `NOTIFY` on the schema's channel, sent
/// in the writing transaction so it arrives only once the change is there to read.
struct PostgresChangeNotice: Codable, Hashable {
    /// The storage that wrote it: a storage does not act on its own notices.
    var from: String
    var namespace: String
    var entities: [String]
    /// Cache keys (`StoredNode.key(for:)`) of objects written anew.
    var updated: [String] = []
    /// Cache keys of objects removed.
    var deleted: [String] = []

    /// PostgreSQL's limit on a payload is 8000 bytes; a change naming more objects is told in
    /// several notices of at most this many.
    static let maxPayloadBytes = 7000

    /// The notices that tell `write` (which removed `removed`), each small enough to send;
    /// none when the write changes nothing others hold.
    static func notices(for write: CacheWrite, removed: Set<ObjectID>, from: String, namespace: String) -> [String] {
        let changed = write.invalidated.union(write.incomplete)
        let updated = write.isRefresh || !changed.isEmpty ? write.nodes.map(\.id) : []
        guard !changed.isEmpty || !removed.isEmpty || !updated.isEmpty else { return [] }
        let entities = changed.union(removed.map(\.entity)).union(updated.map(\.entity)).sorted()
        // Sizes are measured with the encoder that writes the notice, so they are exact.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func text(_ notice: PostgresChangeNotice) -> String {
            (try? String(decoding: encoder.encode(notice), as: UTF8.self)) ?? "{}"
        }
        var notices: [String] = []
        var notice = PostgresChangeNotice(from: from, namespace: namespace, entities: entities)
        let base = text(notice).utf8.count
        var size = base
        func add(_ id: ObjectID, to list: WritableKeyPath<PostgresChangeNotice, [String]>) {
            guard let key = try? StoredNode.key(for: id), let encoded = try? encoder.encode(key) else { return }
            // The key and the comma before it (the first key in a list needs none, which leaves
            // a byte of slack).
            let cost = encoded.count + 1
            if size + cost > maxPayloadBytes, size > base {
                notices.append(text(notice))
                notice.updated = []
                notice.deleted = []
                size = base
            }
            notice[keyPath: list].append(key)
            size += cost
        }
        for id in updated where !removed.contains(id) { add(id, to: \.updated) }
        for id in removed { add(id, to: \.deleted) }
        notices.append(text(notice))
        return notices
    }

    /// The change a notice tells, as the chain publishes it.
    func event(source: String) -> ChangeEvent {
        ChangeEvent(
            updated: Set(updated.compactMap { try? StoredNode.id(forKey: $0) }),
            deleted: Set(deleted.compactMap { try? StoredNode.id(forKey: $0) }),
            invalidatedEntities: Set(entities), source: source)
    }

    /// The channel of a cache schema: PostgreSQL channel names are identifiers of at most 63
    /// bytes, so a long schema name is hashed.
    static func channel(schema: String) -> String {
        let channel = "storechain_changes_" + schema
        guard channel.utf8.count > 63 else { return channel }
        return "storechain_changes_" + String(Fingerprint.digest(of: schema), radix: 16)
    }
}

/// Listens on a cache schema's channel while anyone reads the changes, on a connection of its
/// own, and hands every other storage's notice of this namespace to each reader. When the
/// connection drops it listens again once the server is back; the notices sent meanwhile are lost
/// (PostgreSQL does not replay them), so it then hands every reader a gap (`ChangeEvent.isGap`):
/// the caches above forget what they hold and observations refetch.
final class PostgresChangeListener: Sendable {
    let channel: String
    let namespace: String
    /// This storage's notices, which it does not act on.
    let ownID: String
    let source: String
    private let connections: PostgresConnections
    private let clock: any StoreClock
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var readers: [Int: AsyncStream<ChangeEvent>.Continuation] = [:]
        var nextReader = 0
        var listening: Task<Void, Never>?
        var isListening = false
        /// Whether a listening connection dropped since the channel was last listened on: the
        /// next one starts after a gap.
        var missedNotices = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    init(
        channel: String, namespace: String, ownID: String, source: String, connections: PostgresConnections,
        clock: any StoreClock, logger: Logger
    ) {
        self.channel = channel
        self.namespace = namespace
        self.ownID = ownID
        self.source = source
        self.connections = connections
        self.clock = clock
        self.logger = logger
    }

    deinit {
        state.withLock { $0.listening?.cancel() }
    }

    /// A stream of the changes other processes make, from now until it is dropped.
    func changes() -> AsyncStream<ChangeEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeEvent.self)
        let id = state.withLock { state in
            defer { state.nextReader += 1 }
            state.readers[state.nextReader] = continuation
            if state.listening == nil { state.listening = Task { [weak self] in await self?.listen() } }
            return state.nextReader
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let idle = state.withLock { state -> Task<Void, Never>? in
                state.readers[id] = nil
                guard state.readers.isEmpty else { return nil }
                defer { state.listening = nil }
                return state.listening
            }
            idle?.cancel()
        }
        return stream
    }

    /// Listens until cancelled, listening again after `retryInterval` whenever the connection
    /// fails.
    private func listen() async {
        while !Task.isCancelled {
            do {
                try await connections.withOwnConnection { connection in
                    // Closing the connection is what ends the wait for the next notification.
                    try await withTaskCancellationHandler {
                        try await connection.listen(on: channel) { notifications in
                            setListening(true)
                            for try await notification in notifications { deliver(notification.payload) }
                        }
                    } onCancel: {
                        connection.closeInBackground()
                    }
                }
                setListening(false)
            } catch {
                setListening(false)
                guard !Task.isCancelled else { return }
                logger.debug("\(source): listening on \(channel) stopped: \(error); listening again soon")
            }
            try? await clock.sleep(for: connections.retryInterval)
        }
    }

    /// Returns once the channel is listened on (for tests: a change made before that is not
    /// heard of).
    func untilListening() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if !state.isListening { state.waiters.append(continuation) }
                return state.isListening
            }
            if now { continuation.resume() }
        }
    }

    private func setListening(_ listening: Bool) {
        let (waiters, readers) = state.withLock {
            state -> ([CheckedContinuation<Void, Never>], [AsyncStream<ChangeEvent>.Continuation]) in
            defer { state.isListening = listening }
            guard listening else {
                if state.isListening { state.missedNotices = true }
                return ([], [])
            }
            defer {
                state.waiters = []
                state.missedNotices = false
            }
            return (state.waiters, state.missedNotices ? Array(state.readers.values) : [])
        }
        if !readers.isEmpty {
            logger.notice("\(source): listening on \(channel) again after a drop; changes made meanwhile are unknown")
            let gap = ChangeEvent(source: source, scope: .gap)
            for reader in readers { reader.yield(gap) }
        }
        for waiter in waiters { waiter.resume() }
    }

    private func deliver(_ payload: String) {
        guard let notice = try? JSONDecoder().decode(PostgresChangeNotice.self, from: Data(payload.utf8)) else {
            logger.warning("\(source): a notice on \(channel) is not one of ours, ignored: \(payload.prefix(200))")
            return
        }
        guard notice.from != ownID, notice.namespace == namespace else { return }
        let event = notice.event(source: source)
        for reader in state.withLock({ Array($0.readers.values) }) { reader.yield(event) }
    }
}
