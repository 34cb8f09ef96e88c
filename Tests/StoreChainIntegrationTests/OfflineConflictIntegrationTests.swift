import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// Updates and deletes carry the version they were based on (`If-Match`); the demo backend
/// answers 412 when someone else changed the object since, and the outbox settles it by its
/// conflict policy.
@Suite(.serialized) struct OfflineConflictIntegrationTests {
    let backendTests = DemoBackendTests()
    let album = ObjectID(entity: "Album", key: .integer(1))

    /// Someone else changes album 1 through the backend's own store.
    func changeElsewhere(_ backend: DemoBackend, _ attributes: AttributeValues) throws {
        _ = try backend.store.save(SaveChanges(updated: [Node(id: album, attributes: attributes)]))
    }

    @Test func anUpdateBasedOnAnOldVersionIsRefusedWith412() async throws {
        try await backendTests.withBackend { backend, base in
            try changeElsewhere(backend, ["price": 5.0])
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(handlers: [], terminal: remote, tracing: nil)
            let read = try #require(try await chain.send(.objectFault(album)).objectNode())
            #expect(read.version == "1")
            try changeElsewhere(backend, ["price": 6.0])
            var stale = Node(id: album, attributes: ["year": 2030], version: read.version)
            await #expect {
                _ = try await chain.send(.save(SaveChanges(updated: [stale])))
            } throws: { error in
                (error as? StoreChainError)?.isConflict == true && (error as? StoreChainError)?.status == 412
            }
            stale.version = "2"
            let saved = try await chain.send(.save(SaveChanges(updated: [stale]))).saveResult()
            #expect(saved.nodes.first?.version == "3" && backend.store.node(for: album)?[attribute: "year"] == 2030)
        }
    }

    @Test func aDeleteBasedOnAnOldVersionIsRefusedWith412() async throws {
        try await backendTests.withBackend { backend, base in
            try changeElsewhere(backend, ["price": 5.0])
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(handlers: [], terminal: remote, tracing: nil)
            // A context read version "1"; someone else changes the album; the context's delete
            // is based on the version it read, so it does not remove a change it never saw.
            let context = ObjectContext(chain: chain, model: backend.model)
            let object = context.object(with: album)
            _ = try await object.value("title")
            try changeElsewhere(backend, ["price": 6.0])
            context.delete(object)
            await #expect {
                _ = try await context.save()
            } throws: { error in
                (error as? StoreChainError)?.isConflict == true && (error as? StoreChainError)?.status == 412
            }
            #expect(backend.store.node(for: album) != nil)
            // Based on the current version, it goes.
            _ = try await chain.send(.save(SaveChanges(deleted: [album], deletedVersions: [album: "2"])))
            #expect(backend.store.node(for: album) == nil)
        }
    }

    @Test(arguments: [ConflictPolicy.merge, .serverWins])
    func anOfflineEditThatMeetsSomeoneElsesIsSettledByThePolicy(_ policy: ConflictPolicy) async throws {
        try await backendTests.withBackend { backend, base in
            try changeElsewhere(backend, ["price": 5.0])
            let path = TemporaryFolder.make("storechain").appending(path: "outbox.sqlite").path
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let outbox = try OutboxHandler(
                model: backend.model,
                options: OutboxOptions(path: path, retryDelay: .seconds(3600), conflictPolicy: policy))
            let chain = Chain(
                handlers: [MemoryCache(model: backend.model), outbox], terminal: remote, clock: ManualClock(),
                tracing: nil)
            let context = ObjectContext(chain: chain, model: backend.model)
            let object = context.object(with: album)
            let title = try await object.value("title")
            backend.setQuirks(DemoQuirks(failEvery: 1))
            try object.set(2030, for: "year")
            #expect(try await context.save().isPending)
            backend.setQuirks(.none)
            try changeElsewhere(backend, ["price": 6.0])
            #expect(try await context.sync() == 0)
            let stored = try #require(backend.store.node(for: album))
            #expect(stored[attribute: "price"] == 6.0 && stored[attribute: "title"] == title)
            // merge: the app's year on top of the other change; server-wins: the app's year dropped.
            #expect((stored[attribute: "year"] == 2030) == (policy == .merge))
            // The app reads what the backend holds, and nothing is left unsent.
            #expect(try await object.value("year") == stored[attribute: "year"])
            #expect(!context.hasUnsentChanges)
            await chain.shutdown(cancelling: true)
        }
    }
}
