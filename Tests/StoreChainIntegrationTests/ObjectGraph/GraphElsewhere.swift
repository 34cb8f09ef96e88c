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
    /// (its caches forgot what it names and its contexts were sent the event).
    func save(_ update: Node, telling chain: Chain) async throws {
        _ = try await store.respond(to: .save(SaveChanges(updated: [update])), context: chain.makeContext())
        let events = chain.events.subscribe()
        current.withLock { $0 }?.tell(
            ChangeEvent(updated: [update.id], invalidatedEntities: [update.id.entity], source: Self.source))
        for await event in events where event.source == Self.source { break }
    }
}
