import Foundation
import StoreChain
import Synchronization

/// Every change made to the demo catalog, numbered, for `GET /v2/changes`: the newest `window`
/// are kept, so a client can resume from a cursor that recent and gets a gap (410) beyond it.
/// Cursors are `EPOCH-NUMBER`; the epoch changes with every backend, so a cursor from before a
/// restart is a gap too, never a silent resume at the wrong place.
final class DemoChangeLog: Sendable {
    struct Entry: Sendable {
        let number: Int
        let id: ObjectID
        let operation: FeedChange.Operation
    }

    /// What a request for changes gets.
    enum Answer {
        case changes([Entry], cursor: String)
        case gap(cursor: String)
    }

    private struct State {
        var entries: [Entry] = []
        var last = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        /// The backend is stopping: long polls answer at once.
        var isClosed = false
    }

    let epoch = String(UInt32.random(in: 1...UInt32.max), radix: 36)
    let window: Int
    private let state = Mutex(State())

    init(window: Int = 1_000) {
        self.window = max(1, window)
    }

    var cursor: String { state.withLock { "\(epoch)-\($0.last)" } }

    /// Whether the backend is stopping (long polls and event streams end).
    var isClosed: Bool { state.withLock(\.isClosed) }

    /// The cursor that stands for `entry`: asking from it gives the changes after it.
    func cursor(of entry: Entry) -> String { "\(epoch)-\(entry.number)" }

    /// Records what a save changed, in order, and wakes every long poll.
    func record(_ changes: SaveChanges, _ result: SaveResult) {
        var made: [(ObjectID, FeedChange.Operation)] = []
        made += changes.inserted.map { (result.permanentIDs[$0.id] ?? $0.id, .insert) }
        made += changes.updated.map { ($0.id, .update) }
        made += changes.deleted.map { ($0, .delete) }
        let waiters = state.withLock { state in
            for (id, operation) in made {
                state.last += 1
                state.entries.append(Entry(number: state.last, id: id, operation: operation))
            }
            if state.entries.count > window { state.entries.removeFirst(state.entries.count - window) }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends every long poll (with what it has) and makes later ones answer at once, so a server
    /// stopping does not wait out their waits.
    func close() {
        let waiters = state.withLock { state in
            state.isClosed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Lets long polls wait again (the backend started again).
    func reopen() {
        state.withLock { $0.isClosed = false }
    }

    /// The changes after `cursor`, at most `limit`, waiting up to `wait` for one when there are
    /// none yet; without a cursor, none and the current position.
    func changes(after cursor: String?, limit: Int, wait: Duration) async -> Answer {
        guard let cursor else { return .changes([], cursor: self.cursor) }
        let parts = cursor.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, parts[0] == epoch, let after = Int(parts[1]) else { return .gap(cursor: self.cursor) }
        let deadline = ContinuousClock.now.advanced(by: wait)
        while true {
            let (answer, seen) = state.withLock { state -> (Answer?, Int) in
                (self.answer(after: after, limit: limit, in: state), state.last)
            }
            if let answer { return answer }
            guard ContinuousClock.now < deadline, !state.withLock(\.isClosed) else {
                return .changes([], cursor: cursor)
            }
            await waitForChange(after: seen, until: deadline)
        }
    }

    private func answer(after: Int, limit: Int, in state: State) -> Answer? {
        let oldest = state.entries.first?.number ?? state.last + 1
        guard after <= state.last, after >= oldest - 1 else { return .gap(cursor: "\(epoch)-\(state.last)") }
        let found = state.entries.drop { $0.number <= after }.prefix(limit)
        guard let newest = found.last else { return nil }
        return .changes(Array(found), cursor: "\(epoch)-\(newest.number)")
    }

    /// Returns at the first change after number `seen`, at `deadline`, or when cancelled,
    /// whichever comes first.
    private func waitForChange(after seen: Int, until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            group.addTask { await self.nextChange(after: seen) }
            await group.next()
            group.cancelAll()
        }
    }

    private func nextChange(after seen: Int) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let cancelled = state.withLock { state in
                    if Task.isCancelled || state.last > seen || state.isClosed { return true }
                    state.waiters[id] = waiter
                    return false
                }
                if cancelled { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
