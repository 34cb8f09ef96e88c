import Foundation
import StoreChainTesting
import Testing

@testable import StoreChain

/// What only the memory cache does: bounds by objects and bytes with LRU eviction. The rules
/// it shares with the disk cache are tested over both in StoreChainSQLiteTests.
@Suite struct MemoryCacheTests {
    private func node(_ key: Int, title: String = "t") -> Node {
        var node = TestData.node("Track", key, ["title": .string(title)])
        node.freshness = Freshness(expiresAt: .distantFuture)
        return node
    }

    private func write(_ nodes: [Node], to storage: MemoryCacheStorage) async {
        var write = CacheWrite()
        write.nodes = nodes
        _ = await storage.write(write)
    }

    private func keys(in storage: MemoryCacheStorage, upTo count: Int) async -> [Int] {
        let found = await storage.nodes((0..<count).map { ObjectID(entity: "Track", key: .integer($0)) })
        return (0..<count).filter { found[ObjectID(entity: "Track", key: .integer($0))] != nil }
    }

    /// `store`, answering saves as a REST backend does: the objects sent with their foreign keys
    /// (the relationships in `keeping`), without the lists they hold.
    private static func answeringSavesAsREST(_ store: InMemoryStore, keeping: Set<String>) -> RecordingResponder {
        RecordingResponder { request, context in
            var response = try await store.respond(to: request, context: context)
            if case .saved(var result) = response.result {
                result.nodes = result.nodes.map { node in
                    var node = node
                    node.relationships = node.relationships.filter { name, _ in keeping.contains(name) }
                    return node
                }
                response.result = .saved(result)
            }
            return response
        }
    }

    @Test func theObjectsOfOneAnswerShareOneFreshness() async throws {
        let store = try MusicFixture.store()
        let memory = MemoryCache(model: store.model)
        let chain = Chain(terminal: store) { memory }
        _ = try await chain.send(.fetch(try TestData.fetch("Album")))
        let cached = await memory.storage.nodes(of: "Album", matching: nil)
        let boxes = cached.compactMap(\.sharedFreshness)
        #expect(cached.count > 1 && boxes.count == cached.count)
        #expect(boxes.allSatisfy { $0.isSameBox(as: boxes[0]) })
    }

    /// Properties read through a to-one (`band.name`) answered from a cached complete collection
    /// come from the related objects, as the store answers them.
    @Test func dictionariesThroughAToOneAnsweredFromACachedCollectionReadTheRelatedObjects() async throws {
        let store = try MusicFixture.store()
        let chain = Chain(terminal: store) { MemoryCache(model: store.model) }
        _ = try await chain.send(.fetch(try TestData.fetch("Album")))
        var request = try TestData.fetch("Album", sort: [FetchSortDescriptor("id")])
        request.resultType = .dictionaries(["title", "band.name"])
        #expect(try await chain.fetch(request) == store.fetch(request))
    }

    /// A complete collection stays complete only when the cache holds what the save changed in
    /// it: an inserted object the backend answered without (only its new key) leaves the
    /// collection incomplete, and the next fetch of it asks the backend.
    @Test func anInsertTheCacheDoesNotHoldLeavesTheCollectionIncomplete() async throws {
        let store = try MusicFixture.store()
        let terminal = RecordingResponder { request, context in
            var response = try await store.respond(to: request, context: context)
            if case .saved(var result) = response.result {
                result.nodes = []
                response.result = .saved(result)
            }
            return response
        }
        let chain = Chain(handlers: [MemoryCache(model: store.model)], terminal: terminal)
        let allBands = try TestData.fetch("Band", sort: [FetchSortDescriptor("id")])
        _ = try await chain.send(.fetch(allBands))
        _ = try await chain.send(
            .save(SaveChanges(inserted: [Node(id: .temporary(entity: "Band"), attributes: ["name": "Rookies"])])))
        let after = try await chain.send(.fetch(allBands))
        #expect(after.info.cacheStatus == .miss)
        #expect(try after.fetchResult() == store.fetch(allBands))
        #expect(terminal.requests.filter { $0.kind == .fetch }.count == 2)
    }

    /// Found by the object-graph test: a save's answer that did not mention a relationship (a
    /// REST backend's answer to a PATCH of an album's title may not carry its band) replaced the
    /// cached object, so a later fetch over `band.…` found the album without a band and failed.
    @Test func aSavedObjectKeepsTheCachedRelationshipsItsAnswerDoesNotMention() async throws {
        let store = try MusicFixture.store()
        let album = ObjectID(entity: "Album", key: 10)
        let terminal = RecordingResponder { request, context in
            var response = try await store.respond(to: request, context: context)
            if case .saved(var result) = response.result {
                result.nodes = result.nodes.map { node in
                    var node = node
                    node.relationships = [:]
                    return node
                }
                response.result = .saved(result)
            }
            return response
        }
        let memory = MemoryCache(model: store.model)
        let chain = Chain(handlers: [memory], terminal: terminal)
        _ = try await chain.send(.objectFault(album))
        #expect(
            await memory.storage.nodes([album])[album]?.relationships["band"]
                == .toOne(ObjectID(entity: "Band", key: 1)))

        _ = try await chain.send(.save(SaveChanges(updated: [Node(id: album, attributes: ["title": "Retitled"])])))
        let cached = await memory.storage.nodes([album])[album]
        #expect(cached?[attribute: "title"] == "Retitled")
        #expect(cached?.relationships["band"] == .toOne(ObjectID(entity: "Band", key: 1)))
    }

    /// Found by the object-graph test (seed 662459, after a restart over a disk cache): saving a
    /// band whose albums the cache knew took `band` off every one of those albums, so a later
    /// fetch over `album.band.…` failed with "cannot read 'Album.band' from the backend". A save
    /// changes the other side of the relationships it changed, and only those: a renamed band
    /// keeps its albums' `band`; a moved album is in its new band's list and not the old one's; a
    /// deleted album's tracks hold no album.
    @Test func aSaveChangesOnlyTheOtherSideOfRelationshipsItChanged() async throws {
        let store = try MusicFixture.store()
        let terminal = Self.answeringSavesAsREST(store, keeping: ["band", "album"])
        let memory = MemoryCache(model: store.model)
        let chain = Chain(handlers: [memory], terminal: terminal)
        let band1 = ObjectID(entity: "Band", key: 1)
        let band2 = ObjectID(entity: "Band", key: 2)
        let album10 = ObjectID(entity: "Album", key: 10)
        let album11 = ObjectID(entity: "Album", key: 11)
        for band in [band1, band2] { _ = try await chain.send(.objectFault(band)) }
        _ = try await chain.send(.relationshipFault(band1, relationship: "albums"))
        _ = try await chain.send(.relationshipFault(band2, relationship: "albums"))
        _ = try await chain.send(.relationshipFault(album11, relationship: "tracks"))
        for album in [album10, album11] { _ = try await chain.send(.objectFault(album)) }
        func cached(_ id: ObjectID) async -> Node? { await memory.storage.nodes([id])[id] }
        #expect(await cached(album10)?.relationships["band"] == .toOne(band1))

        _ = try await chain.send(.save(SaveChanges(updated: [Node(id: band1, attributes: ["name": "Renamed"])])))
        #expect(await cached(album10)?.relationships["band"] == .toOne(band1), "a renamed band keeps its albums")
        #expect(await cached(album11)?.relationships["band"] == .toOne(band1))
        #expect(await cached(band1)?.relationships["albums"] != nil, "nor does it lose its own list")

        _ = try await chain.send(
            .save(SaveChanges(updated: [Node(id: album10, attributes: [:], relationships: ["band": .toOne(band2)])])))
        #expect(await cached(album10)?.relationships["band"] == .toOne(band2))
        #expect(await cached(band1)?.relationships["albums"] == nil, "the old band's list is read again")
        #expect(await cached(band2)?.relationships["albums"] == nil, "and the new band's")
        #expect(await cached(album11)?.relationships["band"] == .toOne(band1), "its other album stays")

        let track110 = ObjectID(entity: "Track", key: 110)
        _ = try await chain.send(.objectFault(track110))
        #expect(await cached(track110)?.relationships["album"] == .toOne(album11))
        _ = try await chain.send(.save(SaveChanges(updated: [Node(id: track110, attributes: ["seconds": 151])])))
        #expect(await cached(track110)?.relationships["album"] == .toOne(album11))
        #expect(await cached(album11)?.relationships["tracks"] == .toMany([track110]), "an attribute moves nothing")
    }

    /// Found by the object-graph test (seed 396430, after a restart over a disk cache): an album
    /// inserted for a band and the band's own change, saved in one request, left the band's
    /// cached `albums` without the new album (the band, being saved, kept its cached list).
    @Test func anObjectSavedWithANewMemberDoesNotKeepItsOldList() async throws {
        let store = try MusicFixture.store()
        let terminal = Self.answeringSavesAsREST(store, keeping: ["band"])
        let memory = MemoryCache(model: store.model)
        let chain = Chain(handlers: [memory], terminal: terminal)
        let band = ObjectID(entity: "Band", key: 1)
        _ = try await chain.send(.objectFault(band))
        let before = try await chain.send(.relationshipFault(band, relationship: "albums")).relationshipValue()
        let album = ObjectID.temporary(entity: "Album")
        let saved = try await chain.send(
            .save(
                SaveChanges(
                    inserted: [Node(id: album, attributes: ["title": "New"], relationships: ["band": .toOne(band)])],
                    updated: [Node(id: band, attributes: ["name": "Renamed"])])))
        let permanent = try #require(try saved.saveResult().permanentIDs[album])
        let after = try await chain.send(.relationshipFault(band, relationship: "albums")).relationshipValue()
        #expect(Set(after.objectIDs) == Set(before.objectIDs).union([permanent]))
    }

    /// The reported contradiction: "answered by disk-cache, cache miss, 0 exchanges". A cache
    /// that misses and forwards to a cache below that holds the answer reports that cache's hit,
    /// for fetches, counts and faults.
    @Test func aMissAnsweredByACacheBelowIsAHit() async throws {
        let store = try MusicFixture.store()
        let below = CacheHandler(name: "lower-cache", model: store.model, storage: MemoryCacheStorage())
        var count = try TestData.fetch("Band")
        count.resultType = .count
        // None answers another: an album, the bands, the tracks.
        let requests: [StoreRequest] = [
            .objectFault(ObjectID(entity: "Album", key: 10)), .fetch(count), .fetch(try TestData.fetch("Track")),
        ]
        let cold = Chain(handlers: [MemoryCache(model: store.model), below], terminal: store)
        for request in requests {
            let info = try await cold.send(request).info
            #expect(info.cacheStatus == .miss, "\(request): \(info.answeredBy)")
        }
        // A new top cache (a new process over the same lower cache).
        let warm = Chain(handlers: [MemoryCache(model: store.model), below], terminal: store)
        for request in requests {
            let info = try await warm.send(request).info
            #expect(info.cacheStatus == .hit, "\(request)")
            #expect(info.answeredBy == "lower-cache", "\(request)")
        }
    }

    /// Regression (found by the demo): a memory cache over a disk cache with
    /// stale-while-revalidate stored the disk's stale answer as fresh and hid that it was stale.
    @Test func aStaleAnswerFromBelowIsPassedUpAndNotStoredAsFresh() async throws {
        let store = try MusicFixture.store()
        let terminal = RecordingResponder { request, context in
            var response = try await store.respond(to: request, context: context)
            response.info.isStale = true
            return response
        }
        let chain = Chain(terminal: terminal) { MemoryCache(model: store.model) }
        let bands = try TestData.fetch("Band")
        #expect(try await chain.send(.fetch(bands)).info.isStale)
        #expect(try await chain.send(.fetch(bands)).info.isStale, "not answered from the memory cache as fresh")
        try terminal.requireForwarded(exactly: 2, .fetch)
    }

    /// Stores a query window of these track keys, after the tracks themselves.
    private func writeQuery(_ keys: [Int], nodes: [Node], to storage: MemoryCacheStorage) async -> CachedQuery {
        var write = CacheWrite()
        write.nodes = nodes
        let query = CachedQuery(
            request: FetchRequest(entity: "Track", sortDescriptors: [FetchSortDescriptor("title")]),
            ids: keys.map { ObjectID(entity: "Track", key: .integer($0)) }, reachesEnd: true,
            freshness: Freshness(expiresAt: .distantFuture))
        write.query = query
        _ = await storage.write(write)
        return query
    }

    @Test func aWindowLookupGivesNodesInOrderAndCountsAsUse() async {
        // Room for the three tracks and the query: a fourth entry evicts the least recent.
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 3))
        let query = await writeQuery([2, 0, 2], nodes: [node(0), node(1), node(2)], to: storage)
        // Asked twice: the second answer is the kept one, and must count as use as the first did.
        for _ in 0..<2 {
            _ = await storage.node(ObjectID(entity: "Track", key: 1))  // 1 is now the most recently used
            let window = await storage.nodes(inWindow: query.ids[...], ofQuery: query.key)
            #expect(window?.map(\.id) == query.ids)
        }
        // 2 and 0 were used after 1: 1 is now the least recently used, and goes first (after the
        // query, used before it).
        await write([node(3)], to: storage)
        #expect(await keys(in: storage, upTo: 4) == [0, 2, 3])
        let missing = [ObjectID(entity: "Track", key: 2), ObjectID(entity: "Track", key: 9)]
        #expect(await storage.nodes(inWindow: missing[...], ofQuery: query.key) == nil, "9 is not cached")
    }

    /// A kept answer counts toward the byte limit and is kept only within it: it never makes the
    /// cache evict, and goes (with its bytes) when its nodes change.
    @Test func aKeptWindowCountsTowardTheByteLimitAndIsKeptOnlyWithinIt() async {
        let nodes = (0..<20).map { node($0) }
        for roomy in [true, false] {
            let storage = MemoryCacheStorage(limits: .init(maxBytes: roomy ? 1 << 20 : 5_000))
            let query = await writeQuery(Array(0..<20), nodes: nodes, to: storage)
            let stored = storage.usage
            #expect(stored.objects == 20)
            let window = await storage.nodes(inWindow: query.ids[...], ofQuery: query.key)
            #expect(window?.map(\.id) == query.ids)
            let kept = storage.usage
            #expect(kept.objects == 20 && kept.queries == 1, "nothing evicted for it")
            if roomy {
                #expect(kept.bytes > stored.bytes, "the kept answer is counted")
                await write([node(0, title: "changed")], to: storage)
                let changed = await storage.nodes(inWindow: query.ids[...], ofQuery: query.key)
                #expect(changed?.first?.attributes["title"] == .string("changed"))
            } else {
                #expect(kept.bytes == stored.bytes && kept.bytes <= 5_000, "not kept: it does not fit")
            }
        }
    }

    /// The answer kept for a window is never older than the nodes it holds: a node rewritten,
    /// refreshed or removed is seen at once, and so is a query stored again with other IDs.
    @Test func aKeptWindowFollowsEveryChangeOfItsNodesAndQuery() async {
        let storage = MemoryCacheStorage()
        let query = await writeQuery([1, 2], nodes: [node(1), node(2)], to: storage)
        func titles(_ ids: [ObjectID]) async -> [String]? {
            await storage.nodes(inWindow: ids[...], ofQuery: query.key)?.map {
                $0.attributes["title"]?.stringValue ?? "?"
            }
        }
        #expect(await titles(query.ids) == ["t", "t"])
        await write([node(2, title: "new")], to: storage)
        #expect(await titles(query.ids) == ["t", "new"], "a rewritten node")
        let later = Date(timeIntervalSince1970: 1_000)
        await storage.refresh(.node(query.ids[0]), freshness: Freshness(expiresAt: later))
        #expect(await storage.nodes(inWindow: query.ids[...], ofQuery: query.key)?[0].freshness?.expiresAt == later)
        var removal = CacheWrite()
        removal.removed = [query.ids[0]]
        _ = await storage.write(removal)
        #expect(await titles(query.ids) == nil, "a removed node")
        let stored = await writeQuery([2, 3], nodes: [node(3, title: "three")], to: storage)
        #expect(stored.key == query.key)
        #expect(await titles(stored.ids) == ["new", "three"], "the query stored again")
        #expect(await titles(query.ids) == nil, "the old IDs, asked for by an earlier reader")
    }

    @Test func evictsTheLeastRecentlyUsedObjectFirst() async {
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 3))
        await write([node(0), node(1), node(2)], to: storage)
        _ = await storage.nodes([ObjectID(entity: "Track", key: 0)])  // 1 is now the least recently used
        await write([node(3)], to: storage)
        #expect(await keys(in: storage, upTo: 4) == [0, 2, 3])
        await write([node(4)], to: storage)
        // Reading is use: the check above read 0, 2, 3 in that order, so 0 goes next.
        #expect(await keys(in: storage, upTo: 5) == [2, 3, 4])
    }

    /// A hit finds the node's place in the use order kept with the node; after removals that
    /// compact the nodes' storage, each still marks its own place (a stale one would mark
    /// another object used, which then outlives the one read).
    @Test func aHitMarksItsOwnObjectUsedAfterRemovalsCompactTheStorage() async {
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 40))
        await write((0..<40).map { node($0) }, to: storage)
        var removal = CacheWrite()
        removal.removed = Set(
            ([0] + Array(stride(from: 1, to: 40, by: 2))).map { ObjectID(entity: "Track", key: .integer($0)) })
        _ = await storage.write(removal)  // 2, 4, …, 38 are left, 2 the least recently used
        _ = await storage.nodes([ObjectID(entity: "Track", key: 6)])
        await write((40..<62).map { node($0) }, to: storage)  // one over the limit: 2 goes
        let left = await keys(in: storage, upTo: 62)
        #expect(!left.contains(2) && left.contains(4) && left.contains(6))
    }

    @Test func staysWithinItsByteBound() async {
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 1_000, maxBytes: 4_000))
        await write((0..<100).map { node($0, title: String(repeating: "x", count: 100)) }, to: storage)
        let statistics = storage.usage
        #expect(statistics.bytes <= 4_000)
        #expect(statistics.objects > 0 && statistics.objects < 100)
        #expect(await keys(in: storage, upTo: 100).last == 99, "the newest objects stay")
    }

    @Test func evictingAnObjectOfACompleteCollectionMakesItIncomplete() async {
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 2))
        var write = CacheWrite()
        write.nodes = [node(0), node(1)]
        write.collections = ["Track": Freshness(expiresAt: .distantFuture)]
        _ = await storage.write(write)
        #expect(await storage.collection("Track") != nil)
        await self.write([TestData.node("Album", 9)], to: storage)
        #expect(await storage.collection("Track") == nil)
    }

    @Test func lruOrderTracksUse() {
        var order = LRUOrder<Int>()
        for key in 0..<4 { order.touch(key) }
        order.touch(0)
        order.remove(1)
        var drained: [Int] = []
        while let key = order.leastRecent {
            drained.append(key)
            order.remove(key)
        }
        #expect(drained == [2, 3, 0])
        #expect(order.count == 0)
    }

    @Test func lruOrderAgreesWithAListUnderRandomUse() {
        // The reference: keys least recent first, with their sizes.
        var expected: [(key: Int, size: Int)] = []
        var order = LRUOrder<Int>()
        var generator = SplitMix64(seed: 11)
        for step in 0..<5_000 {
            let key = Int.random(in: 0..<40, using: &generator)
            let previous = expected.firstIndex { $0.key == key }
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                let size = Int.random(in: 1..<1_000, using: &generator)
                #expect(order.set(key, size: size) == previous.map { expected[$0].size } ?? 0)
                previous.map { _ = expected.remove(at: $0) }
                expected.append((key, size))
            case 1:
                #expect(order.remove(key) == previous.map { expected[$0].size } ?? 0)
                previous.map { _ = expected.remove(at: $0) }
            case 2:
                if let leastRecent = order.leastRecent {
                    #expect(order.remove(leastRecent) == expected.removeFirst().size)
                }
            default:
                order.touch(key)
                let size = previous.map { expected.remove(at: $0).size } ?? 0
                expected.append((key, size))
            }
            #expect(order.count == expected.count, "step \(step)")
            #expect(order.leastRecent == expected.first?.key, "step \(step)")
        }
        var drained: [Int] = []
        while let key = order.leastRecent {
            drained.append(key)
            order.remove(key)
        }
        #expect(drained == expected.map(\.key))
    }

    @Test func singleFlightGivesEveryWaiterTheFirstCallersError() async throws {
        let flight = SingleFlight<Int>()
        let clock = ManualClock()
        try await withThrowingTaskGroup(of: Result<Int, StoreChainError>.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    do {
                        return .success(
                            try await flight.run("k") {
                                try await clock.sleep(for: .seconds(1))
                                throw StoreChainError(.transport, "down")
                            })
                    } catch let error as StoreChainError {
                        return .failure(error)
                    }
                }
            }
            try await clock.waitForSleepers(1)
            try await flight.waitForWaiters(2, for: "k")
            await clock.advance(by: .seconds(1))
            for try await result in group { #expect(result == .failure(StoreChainError(.transport, "down"))) }
        }
        #expect(clock.sleeperCount == 0)
    }

    /// Starts a run for "k" that answers 7 after one second of `clock`, and waits until it sleeps.
    private func startRunAnswering7AfterASecond(_ flight: SingleFlight<Int>, _ clock: ManualClock) async throws
        -> Task<Int, any Error>
    {
        let run = Task {
            try await flight.run("k") {
                try await clock.sleep(for: .seconds(1))
                return 7
            }
        }
        try await clock.waitForSleepers(1)
        return run
    }

    @Test func aCancelledWaiterStopsWaitingWhileTheRunGoesOn() async throws {
        let flight = SingleFlight<Int>()
        let clock = ManualClock()
        let first = try await startRunAnswering7AfterASecond(flight, clock)
        let waiter = Task { try await flight.run("k") { 0 } }
        try await flight.waitForWaiters(1, for: "k")
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(flight.waiterCount(for: "k") == 0)
        await clock.advance(by: .seconds(1))
        #expect(try await first.value == 7)
    }

    /// Regression (the soak test, once sub-requests ran in task groups): a caller whose run
    /// was joined by another task's request was cancelled by its own group, and the other task
    /// got `CancellationError` although nothing cancelled it.
    @Test func aCancelledRunPassesToAWaiterInsteadOfFailingIt() async throws {
        let flight = SingleFlight<Int>()
        let clock = ManualClock()
        let first = try await startRunAnswering7AfterASecond(flight, clock)
        let waiter = Task { try await flight.run("k") { 8 } }
        try await flight.waitForWaiters(1, for: "k")
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(try await waiter.value == 8, "the waiter ran its own operation")
        #expect(flight.waiterCount(for: "k") == 0)
    }

    @Test func aWaiterCancelledBeforeItJoinsDoesNotWait() async throws {
        let flight = SingleFlight<Int>()
        let clock = ManualClock()
        let first = try await startRunAnswering7AfterASecond(flight, clock)
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await flight.run("k") { 0 }
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        await clock.advance(by: .seconds(1))
        #expect(try await first.value == 7)
    }
}

@Suite struct CacheExpiryTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let expiry = CacheExpiry(defaultTTL: .seconds(300), entityTTL: ["Band": .seconds(3_600)])

    func expires(_ rules: ResponseFreshness?, entity: String = "Band", in expiry: CacheExpiry? = nil) -> Date?? {
        (expiry ?? self.expiry).freshness(for: entity, rules: rules, now: now, validators: true).map(\.expiresAt)
    }

    @Test func usesTheEntityOrDefaultTimeToLive() {
        #expect(expires(nil) == now + 3_600)
        #expect(expires(nil, entity: "Album") == now + 300)
        #expect(expires(ResponseFreshness(), entity: "Album") == now + 300, "a response without rules")
    }

    @Test func theResponsesOwnRulesOverrideIt() {
        #expect(expires(ResponseFreshness(lifetime: .seconds(60))) == now + 60)
        #expect(expires(ResponseFreshness(lifetime: .seconds(60), age: .seconds(20))) == now + 40)
        #expect(expires(ResponseFreshness(lifetime: .seconds(60), age: .seconds(90))) == now)
        #expect(expires(ResponseFreshness(noStore: true)) == .none, "not stored")
        #expect(expires(ResponseFreshness(lifetime: .seconds(60), noCache: true)) == now)
        #expect(expires(ResponseFreshness(heuristicLifetime: .seconds(30))) == now + 3_600, "ttl unless asked")
        let heuristic = CacheExpiry(defaultTTL: .seconds(300), heuristic: true)
        #expect(expires(ResponseFreshness(heuristicLifetime: .seconds(30)), in: heuristic) == now + 30)
        let ignoring = CacheExpiry(defaultTTL: .seconds(300), honoursResponseHeaders: false)
        #expect(expires(ResponseFreshness(noStore: true), in: ignoring) == now + 300)
        let kept = ignoring.freshness(
            for: "Band", rules: ResponseFreshness(validators: Validators(etag: "\"v1\"")), now: now, validators: true)
        #expect(kept?.validators.etag == "\"v1\"" && kept?.rules == nil, "validators are kept, rules are not")
    }

    @Test func notModifiedKeepsTheStoredRulesUnlessItBringsItsOwn() throws {
        let stored = try #require(
            expiry.freshness(
                for: "Band", rules: ResponseFreshness(lifetime: .seconds(60), validators: Validators(etag: "\"a\"")),
                now: now, validators: true
            ))
        let later = now + 600
        let renewed = try #require(expiry.renewed(stored, of: "Band", by: ResponseFreshness(), now: later))
        #expect(renewed.expiresAt == later + 60 && renewed.validators.etag == "\"a\"")
        let own = try #require(
            expiry.renewed(
                stored, of: "Band", by: ResponseFreshness(lifetime: .seconds(5), validators: Validators(etag: "\"b\"")),
                now: later))
        #expect(own.expiresAt == later + 5 && own.validators.etag == "\"b\"")
        let noCache = try #require(
            expiry.freshness(for: "Band", rules: ResponseFreshness(noCache: true), now: now, validators: true))
        let again = try #require(expiry.renewed(noCache, of: "Band", by: ResponseFreshness(), now: later))
        #expect(again.expiresAt == later, "a no-cache response stays no-cache after a 304 without headers")
    }

    @Test func staleAllowancesAreBoundedByThePipelineAndSwitchedOffByTheOrigin() {
        let options = CacheOptions(staleIfError: .seconds(600), staleWhileRevalidate: nil)
        func freshness(_ rules: ResponseFreshness?) -> Freshness { Freshness(expiresAt: now, rules: rules) }
        #expect(options.staleIfError(for: freshness(nil)) == .seconds(600))
        #expect(options.staleIfError(for: freshness(ResponseFreshness(staleIfError: .seconds(60)))) == .seconds(60))
        #expect(options.staleIfError(for: freshness(ResponseFreshness(staleIfError: .seconds(6_000)))) == .seconds(600))
        #expect(options.staleIfError(for: freshness(ResponseFreshness(mustRevalidate: true))) == nil)
        #expect(options.staleIfError(for: freshness(ResponseFreshness(noCache: true))) == nil)
        #expect(options.staleWhileRevalidate(for: freshness(nil)) == nil)
        #expect(
            options.staleWhileRevalidate(for: freshness(ResponseFreshness(staleWhileRevalidate: .seconds(30))))
                == .seconds(30), "the response allows it itself")
        let bounded = CacheOptions(staleWhileRevalidate: .seconds(10))
        #expect(
            bounded.staleWhileRevalidate(for: freshness(ResponseFreshness(staleWhileRevalidate: .seconds(30))))
                == .seconds(10))
        #expect(bounded.staleWhileRevalidate(for: freshness(ResponseFreshness(mustRevalidate: true))) == nil)
    }

    /// A plan kept for one request never answers another: each distinct fetch gets its own, and
    /// every answer is the store's own.
    @Test func aCacheMakesOnePlanPerDistinctFetchAndKeepsNoneThatFails() async throws {
        let store = try MusicFixture.store()
        let memory = MemoryCache(model: store.model)
        let chain = Chain(terminal: store) { memory }
        let byTitle = try TestData.fetch("Album", sort: [FetchSortDescriptor("title")])
        var firstTwo = byTitle
        firstTwo.fetchLimit = 2
        var descending = byTitle
        descending.sortDescriptors = [FetchSortDescriptor("title", ascending: false)]
        func ids(_ result: FetchResult) -> [ObjectID] {
            if case .objects(let nodes) = result { return nodes.map(\.id) }
            return []
        }
        for request in [byTitle, firstTwo, descending, byTitle, firstTwo, descending] {
            let expected = ids(try store.fetch(request))
            #expect(expected.count >= 2)
            #expect(ids(try await chain.fetch(request)) == expected)
        }
        #expect(memory.plans.count == 3)
        let wrong = try TestData.fetch("Album", sort: [FetchSortDescriptor("nope")])
        for _ in 0..<2 {
            await #expect(throws: StoreChainError.self) { try await chain.fetch(wrong) }
        }
        #expect(memory.plans.count == 3, "a request that fails is not kept")

        let bounded = CachePlans(model: store.model, capacity: 2)
        for request in [byTitle, firstTwo, descending] { _ = try bounded.plan(for: request) }
        #expect(bounded.count == 1, "all dropped when full, then the new one kept")
    }

    /// A complete collection answers without indexing its objects by ID only for fetches that
    /// read nothing but the entity's own attributes; anything that could follow a relationship
    /// must get the index, or it would read related objects as missing.
    @Test func onlyFetchesOfOwnAttributesSkipIndexingTheCollection() throws {
        let model = try MusicFixture.model()
        func ownOnly(_ request: FetchRequest) throws -> Bool {
            CachePlan.readsOwnAttributesOnly(request, entity: try #require(model.entity(named: request.entity)))
        }
        let title = FetchSortDescriptor("title")
        #expect(try ownOnly(try TestData.fetch("Album")))
        #expect(
            try ownOnly(try TestData.fetch("Album", where: "title BEGINSWITH[c] 's' AND year >= 1990", sort: [title])))
        #expect(try ownOnly(try TestData.fetch("Album", where: "year IN {1994, 2005} OR price < 11")))
        var dictionaries = try TestData.fetch("Album")
        dictionaries.resultType = .dictionaries(["title", "year"])
        #expect(try ownOnly(dictionaries))

        #expect(try !ownOnly(try TestData.fetch("Album", where: "band.name == 'Low'")))
        #expect(try !ownOnly(try TestData.fetch("Band", where: "ANY albums.year < 1995")))
        #expect(try !ownOnly(try TestData.fetch("Band", where: "albums.@count == 0")))
        #expect(try !ownOnly(try TestData.fetch("Album", where: "band == nil")))
        #expect(try !ownOnly(try TestData.fetch("Album", where: "year IN {1994, band}")))
        #expect(try !ownOnly(try TestData.fetch("Album", sort: [FetchSortDescriptor("band.name")])))
        #expect(try !ownOnly(try TestData.fetch("Album", where: "title == $name")))
        var prefetching = try TestData.fetch("Album")
        prefetching.relationshipKeyPathsForPrefetching = ["tracks"]
        #expect(try !ownOnly(prefetching))
        dictionaries.resultType = .dictionaries(["title", "band"])
        #expect(try !ownOnly(dictionaries))
        #expect(throws: StoreChainError.self) { try CachePlan(try TestData.fetch("Unknown"), model: model) }
    }

    /// A storage that fails a read is taken for one that holds nothing: the fault is answered from
    /// below and the failure logged, never thrown at the app.
    @Test func anObjectFaultWhoseStorageReadFailsIsAnsweredFromBelowAndLogged() async throws {
        let store = try MusicFixture.store()
        let storage = ReadFailingStorage()
        let log = CapturedLog()
        let chain = Chain(
            handlers: [CacheHandler(name: "failing", model: store.model, storage: storage)], terminal: store,
            logger: log.logger(), tracing: nil)
        let id = ObjectID(entity: "Track", key: .integer(200))
        for _ in 0..<2 {
            let response = try await chain.send(.objectFault(id))
            #expect(
                response.result == (try await store.respond(to: .objectFault(id), context: chain.makeContext())).result)
            #expect(response.info.cacheStatus == .miss, "a failing read is a miss every time")
        }
        #expect(storage.reads.withLock { $0 } >= 2, "the fault asked the storage first")
        let warnings = log.entries.filter { $0.level == .warning }.map(\.message)
        #expect(
            warnings.contains { $0.contains("failing: cache read failed") && $0.contains("disk unplugged") },
            "\(warnings)")
    }
}

/// Memory storage whose reads of nodes by ID fail, as a disk cache's do when its file is lost.
private final class ReadFailingStorage: ForwardingCacheStorage {
    struct Unplugged: Error, CustomStringConvertible {
        var description: String { "disk unplugged" }
    }

    let inner = MemoryCacheStorage()
    let reads = Locked(0)

    func nodes(_ ids: [ObjectID]) async throws -> [ObjectID: Node] {
        reads.withLock { $0 += 1 }
        throw Unplugged()
    }
    func nodes(inWindow ids: ArraySlice<ObjectID>, ofQuery key: String) async throws -> [Node]? {
        reads.withLock { $0 += 1 }
        throw Unplugged()
    }
    func node(_ id: ObjectID) async throws -> Node? {
        reads.withLock { $0 += 1 }
        throw Unplugged()
    }
}
