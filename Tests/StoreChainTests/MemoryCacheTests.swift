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

    private func write(_ nodes: [Node], to storage: MemoryCacheStorage) {
        var write = CacheWrite()
        write.nodes = nodes
        _ = storage.write(write)
    }

    private func keys(in storage: MemoryCacheStorage, upTo count: Int) -> [Int] {
        let found = storage.nodes((0..<count).map { ObjectID(entity: "Track", key: .integer($0)) })
        return (0..<count).filter { found[ObjectID(entity: "Track", key: .integer($0))] != nil }
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

    @Test func evictsTheLeastRecentlyUsedObjectFirst() {
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 3))
        write([node(0), node(1), node(2)], to: storage)
        _ = storage.nodes([ObjectID(entity: "Track", key: 0)])  // 1 is now the least recently used
        write([node(3)], to: storage)
        #expect(keys(in: storage, upTo: 4) == [0, 2, 3])
        write([node(4)], to: storage)
        // Reading is use: the check above read 0, 2, 3 in that order, so 0 goes next.
        #expect(keys(in: storage, upTo: 5) == [2, 3, 4])
    }

    @Test func staysWithinItsByteBound() {
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 1_000, maxBytes: 4_000))
        write((0..<100).map { node($0, title: String(repeating: "x", count: 100)) }, to: storage)
        let statistics = storage.statistics
        #expect(statistics.bytes <= 4_000)
        #expect(statistics.objects > 0 && statistics.objects < 100)
        #expect(keys(in: storage, upTo: 100).last == 99, "the newest objects stay")
    }

    @Test func evictingAnObjectOfACompleteCollectionMakesItIncomplete() {
        let storage = MemoryCacheStorage(limits: .init(maxObjects: 2))
        var write = CacheWrite()
        write.nodes = [node(0), node(1)]
        write.collections = ["Track": Freshness(expiresAt: .distantFuture)]
        _ = storage.write(write)
        #expect(storage.collection("Track") != nil)
        self.write([TestData.node("Album", 9)], to: storage)
        #expect(storage.collection("Track") == nil)
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
            await clock.waitForSleepers(1)
            while flight.waiterCount(for: "k") < 2 { await Task.yield() }
            await clock.advance(by: .seconds(1))
            for try await result in group { #expect(result == .failure(StoreChainError(.transport, "down"))) }
        }
        #expect(clock.sleeperCount == 0)
    }

    /// Starts a run for "k" that answers 7 after one second of `clock`, and waits until it sleeps.
    private func startRunAnswering7AfterASecond(_ flight: SingleFlight<Int>, _ clock: ManualClock) async
        -> Task<Int, any Error>
    {
        let run = Task {
            try await flight.run("k") {
                try await clock.sleep(for: .seconds(1))
                return 7
            }
        }
        await clock.waitForSleepers(1)
        return run
    }

    @Test func aCancelledWaiterStopsWaitingWhileTheRunGoesOn() async throws {
        let flight = SingleFlight<Int>()
        let clock = ManualClock()
        let first = await startRunAnswering7AfterASecond(flight, clock)
        let waiter = Task { try await flight.run("k") { 0 } }
        while flight.waiterCount(for: "k") < 1 { await Task.yield() }
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
        let first = await startRunAnswering7AfterASecond(flight, clock)
        let waiter = Task { try await flight.run("k") { 8 } }
        while flight.waiterCount(for: "k") < 1 { await Task.yield() }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(try await waiter.value == 8, "the waiter ran its own operation")
        #expect(flight.waiterCount(for: "k") == 0)
    }

    @Test func aWaiterCancelledBeforeItJoinsDoesNotWait() async throws {
        let flight = SingleFlight<Int>()
        let clock = ManualClock()
        let first = await startRunAnswering7AfterASecond(flight, clock)
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

    @Test func usesTheEntityOrDefaultTimeToLive() {
        #expect(expiry.decision(for: "Band", metadata: [:], now: now) == .store(expiresAt: now + 3_600))
        #expect(expiry.decision(for: "Album", metadata: [:], now: now) == .store(expiresAt: now + 300))
    }

    @Test func responseHeadersOverrideIt() {
        func decide(_ metadata: [String: String]) -> CacheExpiry.Decision {
            expiry.decision(for: "Band", metadata: metadata, now: now)
        }
        #expect(decide(["cache-control": "public, max-age=60"]) == .store(expiresAt: now + 60))
        #expect(decide(["cache-control": "max-age=60", "age": "20"]) == .store(expiresAt: now + 40))
        #expect(decide(["cache-control": "private, no-store"]) == .doNotStore)
        #expect(decide(["cache-control": "no-cache"]) == .store(expiresAt: now))
        #expect(
            decide(["expires": "Sun, 06 Nov 1994 08:49:37 GMT", "date": "Sun, 06 Nov 1994 08:48:37 GMT"])
                == .store(expiresAt: now + 60))
        #expect(decide(["expires": "0"]) == .store(expiresAt: now), "an invalid Expires means already expired")
        let ignoring = CacheExpiry(defaultTTL: .seconds(300), honoursResponseHeaders: false)
        #expect(
            ignoring.decision(for: "Band", metadata: ["cache-control": "no-store"], now: now)
                == .store(expiresAt: now + 300))
    }

    @Test func parsesHTTPDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        for bad in ["", "yesterday", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 32 Nov 1994 08:49:37 GMT"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }
}
