import Foundation
import StoreChain
import StoreChainTesting

/// Another process in the object-graph test: it changes the backend directly and tells the
/// chain as a shared cache's notice would (the IDs and entities it changed, not the values).
/// Each chain the setup makes takes its own `handler()`; the last one made hears the changes.
final class GraphElsewhere: Sendable {
    static let source = "another process"
    private let store: InMemoryStore
    private let current = Locked<ChangesFromElsewhere?>(nil)

    init(store: InMemoryStore) {
        self.store = store
    }

    /// The handler for a new chain (at its top).
    func handler() -> ChangesFromElsewhere {
        let handler = ChangesFromElsewhere()
        current.withLock { $0 = handler }
        return handler
    }

    /// Saves `update` to the backend, tells `chain`, and returns once the chain has relayed it
    /// (its caches forgot or updated what it names and its contexts were sent the event). With
    /// `record`, the change carries the object's new state, as a change feed's does: the caches
    /// update it in place and edit the windows it decides.
    func save(_ update: Node, record: Bool, telling chain: Chain) async throws {
        _ = try await store.respond(to: .save(SaveChanges(updated: [update])), context: chain.makeContext())
        let events = chain.events.subscribe()
        let change =
            if record, let state = store.node(for: update.id) {
                ChangeEvent(updated: [update.id], nodes: [state], source: Self.source)
            } else {
                ChangeEvent(updated: [update.id], invalidatedEntities: [update.id.entity], source: Self.source)
            }
        current.withLock { $0 }?.tell(change)
        for await event in events where event.source == Self.source { break }
    }
}
