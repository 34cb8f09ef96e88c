import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// Offline-first reads: what the app read online is answered with the backend down, after
/// saves the outbox holds, with those saves shown. A save edits the cached windows and counts
/// in place where the cached objects decide them (it used to drop them, and every read after
/// any save failed with "connection refused").
@Suite struct OfflineReadsAfterSavesTests {
    let model: ObjectModel
    let backend: ScriptedBackend
    let oracle: InMemoryStore
    let path = outboxPath()
    let folder: URL

    init() throws {
        model = try MusicFixture.model()
        backend = try ScriptedBackend()
        oracle = try MusicFixture.store()
        folder = try TemporaryFolder.create("storechain-offline-reads")
    }

    /// The titles and years of a fetch's objects, in order (the held insert has a temporary ID).
    func described(_ result: FetchResult) -> [String] {
        guard case .objects(let nodes) = result else { return ["\(result)"] }
        return nodes.map { "\($0[attribute: "title"]) \($0[attribute: "year"])" }
    }

    @Test(arguments: [false, true])
    func whatWasReadOnlineIsAnsweredOfflineWithTheHeldSavesShown(_ withDiskCache: Bool) async throws {
        let clock = ManualClock()
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path, retryDelay: .seconds(3600)))
        var handlers: [any StoreHandler] = [MemoryCache(model: model)]
        if withDiskCache { handlers.append(DiskCache(model: model, path: folder.appending(path: "cache.sqlite").path)) }
        let chain = Chain(handlers: handlers + [outbox], terminal: backend, clock: clock, tracing: nil)
        let context = ObjectContext(chain: chain, model: model)
        let byBand = try TestData.fetch("Album", where: "band.id == 1", sort: [FetchSortDescriptor("title")])
        let firstTwo = try TestData.fetch(
            "Album", where: "year >= 1990", sort: [FetchSortDescriptor("year", ascending: false)], limit: 2)
        var recent = try TestData.fetch("Album", where: "year >= 2000")
        recent.resultType = .count

        // Online: the app reads a band's albums as a fetch, a window, a count and a relationship.
        _ = try await context.fetch(byBand)
        _ = try await context.fetch(firstTwo)
        _ = try await chain.fetch(recent)
        let band = context.object(with: id("Band", 1))
        _ = try await band.relatedObjects("albums")

        // Offline: an update and an insert, held by the outbox.
        backend.mode = .down
        let album = context.object(with: id("Album", 10))
        try album.set(1985, for: "year")
        let fresh = try context.insert("Album", values: ["title": "Fresh", "year": 2024])
        try fresh.setRelated(band, for: "band")
        #expect(try await context.save().isPending)
        _ = try oracle.save(
            SaveChanges(
                inserted: [
                    Node(
                        id: .temporary(entity: "Album"), attributes: ["title": "Fresh", "year": 2024],
                        relationships: ["band": .toOne(id("Band", 1))])
                ], updated: [Node(id: id("Album", 10), attributes: ["year": 1985])]))

        // Past the caches' expiry: every answer now is stale, and says so.
        await clock.advance(by: .seconds(600))
        for request in [byBand, firstTwo] {
            let answer = try await chain.send(.fetch(request))
            #expect(answer.info.isStale, "\(request)")
            #expect(described(try answer.fetchResult()) == described(try oracle.fetch(request)), "\(request)")
        }
        let count = try await chain.send(.fetch(recent))
        #expect(count.info.isStale)
        #expect(try count.fetchResult() == oracle.fetch(recent))

        // A new context reads the band's albums and the updated album as the saves left them.
        let other = ObjectContext(chain: chain, model: model)
        var titles = Set<Value>()
        for album in try await other.object(with: id("Band", 1)).relatedObjects("albums") {
            titles.insert(try await album.value("title"))
        }
        guard case .objects(let albums) = try oracle.fetch(byBand) else { throw StoreChainError(.invalidResponse, "") }
        let expected = Set(albums.map { $0[attribute: "title"] })
        #expect(titles == expected)
        #expect(try await other.object(with: id("Album", 10)).value("year") == 1985)

        // What was never read fails as such.
        let error = await #expect(throws: StoreChainError.self) {
            try await chain.fetch(try TestData.fetch("Album", where: "year < 1900"))
        }
        #expect(error?.code == .offlineNotCached)
        await chain.shutdown()
    }
}
