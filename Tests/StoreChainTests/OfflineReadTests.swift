import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// With the backend out of reach, a read no cache can answer says that, not just "connection
/// refused": the app can tell "offline and never read" from a broken request.
@Suite struct OfflineReadTests {
    let store: InMemoryStore
    let refused = StoreChainError(.transport, "connection refused")

    init() throws {
        store = try Fixtures.store()
    }

    /// A backend that refuses connections once `down` is set.
    func backend(_ down: Watched<Bool>) -> RecordingResponder {
        let store = self.store
        let refused = self.refused
        return RecordingResponder(name: "backend") { request, context in
            if down.withLock({ $0 }) { throw refused }
            return try await store.respond(to: request, context: context)
        }
    }

    @Test func aReadNoCacheHoldsFailsAsOfflineNotCached() async throws {
        let down = Watched(true)
        let chain = Chain(
            handlers: [MemoryCache(model: store.model), MemoryCache(model: store.model)], terminal: backend(down))
        let request = try TestData.fetch("Album", where: "year >= 2005")
        let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(request) }
        #expect(error?.code == .offlineNotCached)
        #expect(error?.isTransient == true, "it may succeed once the backend is back")
        #expect(error?.message.contains("no cache holds fetch Album") == true, "\(String(describing: error))")
        #expect((error?.underlying as? StoreChainError)?.code == .transport)
        let fault = await #expect(throws: StoreChainError.self) {
            try await chain.send(StoreRequest.objectFault(ObjectID(entity: "Album", key: .integer(10))))
        }
        #expect(fault?.code == .offlineNotCached)
        await chain.shutdown()
    }

    /// What a cache holds is answered offline; a read that bypasses the caches fails as the
    /// transport did.
    @Test func whatACacheHoldsIsAnsweredAndAReloadFailsAsTheTransportDid() async throws {
        let down = Watched(false)
        let chain = Chain(handlers: [MemoryCache(model: store.model)], terminal: backend(down))
        let request = try TestData.fetch("Album", where: "year >= 2005")
        let online = try await chain.fetch(request)
        down.withLock { $0 = true }
        #expect(try await chain.fetch(request) == online)
        var reload = request
        reload.cachePolicy = .reload
        let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(reload) }
        #expect(error?.code == .transport)
        await chain.shutdown()
    }
}
