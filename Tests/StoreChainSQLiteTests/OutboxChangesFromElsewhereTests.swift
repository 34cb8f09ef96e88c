import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A change made elsewhere (a feed's, another process's) carries the backend's records; while the
/// outbox holds saves, the app must see those records with the held saves over them, as every
/// read shows them. (The object-graph oracle found an album's `tracks` published with a track a
/// held save had moved away, seed 585799.)
@Suite struct OutboxChangesFromElsewhereTests {
    /// A chain that hears of changes from elsewhere, with an outbox and a memory cache (above
    /// or below it) in front of the scripted backend.
    static func chain(cacheAboveTheOutbox: Bool) throws -> (Chain, ScriptedBackend, ChangesFromElsewhere) {
        let model = try MusicFixture.model()
        let backend = try ScriptedBackend()
        let elsewhere = ChangesFromElsewhere()
        let outbox = try OutboxHandler(
            model: model, options: OutboxOptions(path: outboxPath(), retryDelay: .seconds(3600)))
        let cache = MemoryCache(model: model)
        let handlers: [any StoreHandler] =
            cacheAboveTheOutbox ? [elsewhere, cache, outbox] : [elsewhere, outbox, cache]
        let chain = Chain(handlers: handlers, terminal: backend, clock: ManualClock(), tracing: nil)
        return (chain, backend, elsewhere)
    }

    @Test(.timeLimit(.minutes(1)))
    func aChangeFromElsewhereIsPublishedWithTheHeldSavesOverIt() async throws {
        let (chain, backend, elsewhere) = try Self.chain(cacheAboveTheOutbox: false)
        backend.mode = .readOnly
        // Held: track 100 moves from album 10 to album 11, and album 20 is retitled.
        let held = SaveChanges(updated: [
            Node(id: id("Track", 100), relationships: ["album": .toOne(id("Album", 11))]),
            Node(id: id("Album", 20), attributes: ["title": "Held title"]),
        ])
        #expect(try await chain.send(.save(held)).saveResult().isPending)

        // Elsewhere, albums 10 and 20 change year; their records are the backend's, which does
        // not have the held save.
        let records = [
            Node(
                id: id("Album", 10), attributes: ["id": 10, "title": "Guide to an Escape", "year": 2011],
                relationships: [
                    "band": .toOne(id("Band", 1)), "tracks": .toMany([id("Track", 100), id("Track", 101)]),
                ]),
            Node(
                id: id("Album", 20), attributes: ["id": 20, "title": "Ágætis byrjun", "year": 2001],
                relationships: ["band": .toOne(id("Band", 2))]),
        ]
        let events = chain.events.subscribe()
        elsewhere.tell(ChangeEvent(updated: Set(records.map(\.id)), nodes: records, source: "elsewhere"))
        var published: ChangeEvent?
        for await event in events where event.source == "elsewhere" {
            published = event
            break
        }
        let nodes = Dictionary(uniqueKeysWithValues: (published?.nodes ?? []).map { ($0.id, $0) })
        let album10 = try #require(nodes[id("Album", 10)])
        #expect(album10.relationships["tracks"] == .toMany([id("Track", 101)]), "track 100 is held moving away")
        #expect(album10[attribute: "year"] == .integer(2011))
        let album20 = try #require(nodes[id("Album", 20)])
        #expect(album20[attribute: "title"] == .string("Held title"))
        #expect(album20[attribute: "year"] == .integer(2001))
        await chain.shutdown()
    }

    /// A memory cache above the outbox keeps a held save over the object it holds; a change from
    /// elsewhere with the backend's record must not put the backend's value back there (found by
    /// the object-graph oracle, seed 682789: the app read the other process's year, not its own
    /// held one).
    @Test(.timeLimit(.minutes(1)))
    func aCacheAboveTheOutboxKeepsTheHeldSaveOverAChangeFromElsewhere() async throws {
        let (chain, backend, elsewhere) = try Self.chain(cacheAboveTheOutbox: true)
        let album = id("Album", 20)
        _ = try await chain.send(.objectFault(album))
        backend.mode = .readOnly
        let held = SaveChanges(updated: [Node(id: album, attributes: ["year": 2020])])
        #expect(try await chain.send(.save(held)).saveResult().isPending)
        let record = Node(
            id: album, attributes: ["id": 20, "title": "Ágætis byrjun", "year": 2001],
            relationships: ["band": .toOne(id("Band", 2))])
        let events = chain.events.subscribe()
        elsewhere.tell(ChangeEvent(updated: [album], nodes: [record], source: "elsewhere"))
        for await event in events where event.source == "elsewhere" { break }
        let read = try await chain.send(.objectFault(album)).objectNode()
        #expect(read?[attribute: "year"] == .integer(2020), "the held save, over the backend's record")
        await chain.shutdown()
    }
}
