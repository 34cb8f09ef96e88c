/// Orders a cache's writes after the saves it passed on. An answer read below before a save
/// reached the backend may come back after the save's own write: stored then, it would undo what
/// the save stored or dropped (a count from before a delete, until it expires). So a forwarded
/// request takes a `mark` before it goes down, and its answer is stored only when no save that
/// changed an entity the answer holds was in flight or finished since (`isUnchanged`). Changes
/// another process announced count as saves that finished when they were announced.
///
/// The mark also keys single-flight: a request made after a save does not join one made before it.
///
/// The order belongs to the data, not to one handler: every cache handler over one storage (two
/// chains over one memory storage or one SQLite file in a process, as after a restart) keeps
/// the same order (`SaveOrderSharing`), or one chain's answer, read before another chain's
/// save, would be stored over it. Other processes over the same file keep orders of their own;
/// the file records a count of saves per entity that each checks as it writes
/// (`catchUp(recorded:)`), so another process's save orders this one's writes too.
package final class SaveOrder: Sendable {
    private struct State {
        var epoch: UInt64 = 0
        /// The epoch at which a save last began or ended, by entity it changes.
        var changedAt: [String: UInt64] = [:]
        /// How many saves that change an entity are in flight.
        var saving: [String: Int] = [:]
        /// The count of saves per entity that data shared with other processes records, as this
        /// process last saw it (`catchUp(recorded:)`); `nil` before the first look.
        var recorded: [String: Int64]?
    }

    private let state = Locked(State())
    /// The objects this process saved that no change feed has told back yet.
    package let untold = UntoldSaves()

    package init() {}

    /// Orders kept for data several storages open in this process (a file), by its key; an
    /// order goes when no storage holds it any more.
    private static let shared = Locked<[String: WeakOrder]>([:])

    private struct WeakOrder {
        weak var order: SaveOrder?
    }

    /// The order of the data named `key` (a SQLite file's resolved path) in this process: the
    /// same object for every storage that asks while one still holds it.
    package static func shared(for key: String) -> SaveOrder {
        shared.withLock { orders in
            if let order = orders[key]?.order { return order }
            orders = orders.filter { $0.value.order != nil }
            let order = SaveOrder()
            orders[key] = WeakOrder(order: order)
            return order
        }
    }

    /// The point in the order of saves that a request going down now starts from.
    package func mark() -> UInt64 { state.withLock { $0.epoch } }

    /// A save that changes `entities` is about to go down.
    package func begin(_ entities: Set<String>) {
        state.withLock { state in
            state.epoch += 1
            for entity in entities {
                state.saving[entity, default: 0] += 1
                state.changedAt[entity] = state.epoch
            }
        }
    }

    /// The save `begin(begun)` announced is over (stored, failed or cancelled); it changed
    /// `changed` too (what its answer showed it reached).
    package func end(begun: Set<String>, changed: Set<String> = []) {
        state.withLock { state in
            state.epoch += 1
            for entity in begun {
                state.saving[entity, default: 1] -= 1
                if state.saving[entity] == 0 { state.saving[entity] = nil }
            }
            for entity in begun.union(changed) { state.changedAt[entity] = state.epoch }
        }
    }

    /// Whether nothing but the one save in flight that changes `own` changed `entities` since
    /// `mark`: no other save began, ended or is in flight, and no change was announced. (A save
    /// editing cached windows it read at `mark` stores them only then.)
    package func isUnchanged(_ entities: some Sequence<String>, since mark: UInt64, besidesSaveOf own: Set<String>)
        -> Bool
    {
        state.withLock { state in
            entities.allSatisfy { entity in
                (state.saving[entity] ?? 0) <= (own.contains(entity) ? 1 : 0) && (state.changedAt[entity] ?? 0) <= mark
            }
        }
    }

    /// Takes in the counts of saves per entity (all of them, or those a write checks) that data
    /// shared with other processes records (a cache file's, a shared database's): an entity whose
    /// count moved since this process last looked (an entity not seen then counts 0) was changed
    /// by another process, which counts as a change announced now, so that answers read before it
    /// are not stored after it. The first look learns the counts. Called where the data is
    /// written, with no other write between the look and the write.
    package func catchUp(recorded counts: [String: Int64]) {
        state.withLock { state in
            guard let seen = state.recorded else {
                state.recorded = counts
                return
            }
            state.recorded = seen.merging(counts) { _, new in new }
            let moved = counts.filter { (seen[$0.key] ?? 0) != $0.value }.keys
            guard !moved.isEmpty else { return }
            state.epoch += 1
            for entity in moved { state.changedAt[entity] = state.epoch }
        }
    }

    /// This process raised the recorded counts of saves to `counts` itself (after a
    /// `catchUp(recorded:)` in the same write): not news to it.
    package func record(_ counts: [String: Int64]) {
        state.withLock { state in state.recorded = (state.recorded ?? [:]).merging(counts) { _, new in new } }
    }

    /// Whether no save that changes one of `entities` has been in flight since `mark`.
    package func isUnchanged(_ entities: some Sequence<String>, since mark: UInt64) -> Bool {
        state.withLock { state in
            entities.allSatisfy { state.saving[$0] == nil && (state.changedAt[$0] ?? 0) <= mark }
        }
    }
}

/// A storage whose data several cache handlers may hold at once: they keep its order of saves
/// instead of one each.
package protocol SaveOrderSharing {
    var saveOrder: SaveOrder { get }
}

extension CacheWrite {
    /// The entities whose data the write holds: what a save must not have changed for it to
    /// be stored after the save.
    package var entities: Set<String> {
        var entities = Set(nodes.map(\.id.entity)).union(removed.map(\.entity)).union(collections.keys)
        if let query { entities.formUnion(query.reads) }
        return entities
    }
}
