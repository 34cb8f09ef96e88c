import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A replayed update based on a version someone else has replaced meanwhile (the backend
/// answers 409) is settled by the outbox's conflict policy, and the settlement is published.
@Suite struct OutboxConflictTests {
    let model: ObjectModel
    let backend: ScriptedBackend
    let path = outboxPath()
    let album = ObjectID(entity: "Album", key: .integer(10))

    init() throws {
        model = try MusicFixture.model()
        backend = try ScriptedBackend()
    }

    /// The app renames album 10 (based on version "0") while the backend is down; someone else
    /// changes its year meanwhile (version "1"); then the backend is back and the outbox replays.
    func replayConflict(
        _ policy: ConflictPolicy, resolvers: [String: ConflictResolver] = [:]
    ) async throws -> (OutboxHandler, Chain, ChangeEvent) {
        backend.mode = .down
        let outbox = try OutboxHandler(
            model: model, options: OutboxOptions(path: path, retryDelay: .seconds(3600), conflictPolicy: policy),
            resolvers: resolvers)
        let chain = Chain(
            handlers: [MemoryCache(model: model), outbox], terminal: backend, clock: ManualClock(), tracing: nil)
        let rename = Node(id: album, attributes: ["title": "Mine"], version: "0")
        #expect(try await chain.send(.save(SaveChanges(updated: [rename]))).saveResult().isPending)
        _ = try backend.store.save(SaveChanges(updated: [Node(id: album, attributes: ["year": 1999])]))
        let events = chain.events.subscribe()
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        #expect(try await outbox.entries().isEmpty)
        var iterator = events.makeAsyncIterator()
        var event = try #require(await iterator.next())
        while event.outbox.resolved.isEmpty { event = try #require(await iterator.next()) }
        #expect(event.outbox.resolved == [album: policy] && event.source == "outbox")
        return (outbox, chain, event)
    }

    func stored() -> Node? { backend.store.node(for: album) }

    @Test func serverWinsDropsTheLocalChangeAndTheCachesHoldTheBackendsObject() async throws {
        let (_, chain, event) = try await replayConflict(.serverWins)
        #expect(stored()?[attribute: "title"] == "Guide to an Escape" && stored()?[attribute: "year"] == 1999)
        #expect(event.outbox.sent == [album] && event.nodes.first?[attribute: "year"] == 1999)
        // Answered by the memory cache, which took the backend's object.
        let cached = try await chain.send(.objectFault(album))
        #expect(try cached.objectNode()?[attribute: "title"] == "Guide to an Escape" && cached.info.cacheStatus == .hit)
        #expect(backend.saves.count == 1)
    }

    @Test func clientWinsSendsTheChangeAgainUnconditionally() async throws {
        let (_, _, event) = try await replayConflict(.clientWins)
        #expect(stored()?[attribute: "title"] == "Mine" && stored()?[attribute: "year"] == 1999)
        #expect(backend.saves.count == 2 && backend.saves[1].updated.first?.version == nil)
        #expect(event.outbox.sent.isEmpty)
    }

    @Test func mergeSendsTheChangedAttributesOntoTheBackendsCurrentVersion() async throws {
        _ = try await replayConflict(.merge)
        #expect(stored()?[attribute: "title"] == "Mine" && stored()?[attribute: "year"] == 1999)
        #expect(backend.saves.count == 2 && backend.saves[1].updated.first?.version == "1")
        // The same key: parts of the save the backend took before the conflict are not made twice.
        #expect(backend.saves[0].idempotencyKey == backend.saves[1].idempotencyKey)
    }

    @Test func aNamedResolverDecidesWithBothVersionsInHand() async throws {
        let seen = Locked<[OutboxConflict]>([])
        let resolver: ConflictResolver = { conflict in
            seen.withLock { $0.append(conflict) }
            var choice = conflict.local
            let year = conflict.server?[attribute: "year"].description ?? "?"
            choice.attributes["title"] = .string("Mine (\(year))")
            choice.version = conflict.server?.version
            return .send(choice)
        }
        _ = try await replayConflict(.named("keep-both"), resolvers: ["keep-both": resolver])
        #expect(stored()?[attribute: "title"] == "Mine (1999)")
        let conflict = try #require(seen.withLock { $0 }.first)
        #expect(conflict.local[attribute: "title"] == "Mine" && conflict.server?.version == "1")
    }

    @Test func laterUpdatesAreRebasedOntoTheVersionsTheOutboxsOwnSavesMade() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(
            model: model, options: OutboxOptions(path: path, coalescesUpdates: false, conflictPolicy: .serverWins))
        let chain = Chain(handlers: [outbox], terminal: backend, clock: ManualClock(), tracing: nil)
        let other = ObjectID(entity: "Album", key: .integer(11))
        // Both updates of album 10 are based on version "0" (and not combined).
        for update in [
            Node(id: album, attributes: ["title": "Mine"], version: "0"),
            Node(id: other, attributes: ["title": "Theirs"], version: "0"),
            Node(id: album, attributes: ["year": 2030], version: "0"),
        ] {
            _ = try await chain.send(.save(SaveChanges(updated: [update])))
        }
        let events = chain.events.subscribe()
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        // The third went based on the version the first made: no conflict with itself.
        let versions = { (id: ObjectID) in
            self.backend.saves.compactMap { $0.updated.first { $0.id == id }?.version }
        }
        #expect(versions(album) == ["0", "1"] && versions(other) == ["0"])
        #expect(stored()?[attribute: "title"] == "Mine" && stored()?[attribute: "year"] == 2030)
        var iterator = events.makeAsyncIterator()
        for _ in 0..<3 { #expect(try #require(await iterator.next()).outbox.resolved.isEmpty) }
    }

    @Test func aPolicyNamingNoRegisteredResolverIsAClearError() throws {
        #expect {
            _ = try OutboxHandler(
                model: model, options: OutboxOptions(path: path, conflictPolicy: .named("keep-both")),
                resolvers: ["keep-mine": { _ in .keepServer }])
        } throws: { error in
            let error = error as? StoreChainError
            return error?.code == .invalidRequest && error?.message.contains("'keep-both'") == true
                && error?.suggestion?.contains("keep-mine") == true
        }
    }

    /// The app deletes album 10 (based on version "0") while the backend is down; someone else
    /// changes it meanwhile; the replayed delete meets a 409.
    func replayDeleteConflict(_ policy: ConflictPolicy, resolvers: [String: ConflictResolver] = [:]) async throws
        -> ChangeEvent
    {
        backend.mode = .down
        let outbox = try OutboxHandler(
            model: model, options: OutboxOptions(path: path, retryDelay: .seconds(3600), conflictPolicy: policy),
            resolvers: resolvers)
        let chain = Chain(handlers: [outbox], terminal: backend, clock: ManualClock(), tracing: nil)
        let delete = SaveChanges(deleted: [album], deletedVersions: [album: "0"])
        #expect(try await chain.send(.save(delete)).saveResult().isPending)
        _ = try backend.store.save(SaveChanges(updated: [Node(id: album, attributes: ["year": 1999])]))
        let events = chain.events.subscribe()
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        #expect(try await outbox.entries().isEmpty)
        let event = try #require(await events.first { !$0.outbox.resolved.isEmpty })
        #expect(event.outbox.resolved == [album: policy])
        return event
    }

    @Test func aDeleteThatMeetsSomeoneElsesChangeIsDroppedWhenTheServerWins() async throws {
        let event = try await replayDeleteConflict(.serverWins)
        #expect(stored()?[attribute: "year"] == 1999)
        #expect(event.outbox.sent == [album] && event.nodes.first?[attribute: "year"] == 1999)
        #expect(backend.saves.count == 1)
    }

    @Test func aMergedDeleteDeletesTheObjectAsItIsNow() async throws {
        _ = try await replayDeleteConflict(.merge)
        #expect(stored() == nil)
        #expect(backend.saves.count == 2 && backend.saves[1].deletedVersions == [album: "1"])
        #expect(backend.saves[0].idempotencyKey == backend.saves[1].idempotencyKey)
    }

    @Test func aResolverIsToldTheConflictIsADelete() async throws {
        let seen = Locked<[OutboxConflict]>([])
        let resolver: ConflictResolver = { conflict in
            seen.withLock { $0.append(conflict) }
            return .keepServer
        }
        _ = try await replayDeleteConflict(.named("keep"), resolvers: ["keep": resolver])
        let conflict = try #require(seen.withLock { $0 }.first)
        #expect(conflict.isDelete && conflict.local.version == "0" && conflict.server?.version == "1")
        #expect(stored() != nil)
    }
}
