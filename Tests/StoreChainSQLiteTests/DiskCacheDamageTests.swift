import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// Reliability: a disk cache whose file is damaged at random or whose disk is full never
/// crashes and never gives a wrong answer; it rebuilds or bypasses the file and the app keeps
/// answering from upstream.
@Suite struct DiskCacheDamageTests {
    /// Fetches and faults that fill the cache with queries, nodes and relationships.
    static let requests: [StoreRequest] = {
        var requests: [StoreRequest] = [
            "year >= 2000", "title BEGINSWITH[c] 'r'", "band.name == 'Rue Royale'", "price < 10 OR price == nil",
        ].compactMap { format in (try? TestData.fetch("Album", where: format)).map(StoreRequest.fetch) }
        requests += (1...4).map { .objectFault(ObjectID(entity: "Band", key: .integer($0))) }
        requests += (1...4).map {
            .relationshipFault(ObjectID(entity: "Band", key: .integer($0)), relationship: "albums")
        }
        return requests
    }()

    /// What the backend's own store says, without caches or counting: the oracle.
    static func expected(_ request: StoreRequest, from harness: CacheHarness) async throws -> StoreResponse.Result {
        try await Chain(handlers: [], terminal: harness.backend.store).send(request).result
    }

    static func runAll(_ harness: CacheHarness) async throws {
        for request in requests {
            let answer = try await harness.chain.send(request)
            #expect(answer.result == (try await expected(request, from: harness)), "\(request)")
        }
    }

    /// Damaged files per run: a dozen in `swift test`, more from `Scripts/reliability.sh`.
    static let seeds = 1...(UInt64(ProcessInfo.processInfo.environment["STORECHAIN_DAMAGE_SEEDS"] ?? "") ?? 12)

    @Test(arguments: seeds)
    func randomByteFlipsNeverGiveAWrongAnswer(seed: UInt64) async throws {
        let directory = TemporaryFolder.make("storechain")
        do {
            let harness = try CacheHarness.make(.disk, directory: directory)
            try await Self.runAll(harness)
            await harness.chain.shutdown()
        }
        let path = directory.appending(path: "cache.sqlite").path
        var bytes = try Data(contentsOf: URL(filePath: path))
        var random = SplitMix64(seed: seed)
        // From one flipped byte to a few hundred, anywhere in the file, the header included.
        let flips = [1, 4, 16, 64, 256][Int(seed % 5)]
        for _ in 0..<flips {
            let offset = Int(random.next() % UInt64(bytes.count))
            bytes[offset] ^= UInt8(truncatingIfNeeded: random.next() | 1)
        }
        try bytes.write(to: URL(filePath: path))
        let again = try CacheHarness.make(.disk, directory: directory)
        try await Self.runAll(again)
        try await Self.runAll(again)  // and again, from whatever the cache kept or rebuilt
        await again.chain.shutdown()
    }

    @Test func aFullDiskTurnsWritesIntoWarningsNotFailures() async throws {
        let log = CapturedLog()
        let harness = try CacheHarness.make(.disk, log: log)
        let first = try #require(Self.requests.first)
        _ = try await harness.chain.send(first)
        let storage = try #require((harness.handler as? DiskCache)?.storage)
        try storage.simulateFullDiskForTesting(afterPages: 0)
        try await Self.runAll(harness)
        // Enough distinct queries to need pages the full disk does not have.
        for year in 1_900..<1_980 {
            let request = StoreRequest.fetch(
                try TestData.fetch("Album", where: "year >= \(year) OR title == 'x\(year)'"))
            #expect(try await harness.chain.send(request).result == (try await Self.expected(request, from: harness)))
        }
        #expect(try await harness.chain.send(first).info.cacheStatus == .hit, "what was cached still answers")
        #expect(
            log.entries.contains { $0.level == .warning && $0.message.contains("cache write failed") },
            "the full disk was reported: \(log.text)")
        await harness.chain.shutdown()
    }

    /// Fills a cache file, then lets `damage` change it through another connection.
    static func damagedCache(_ damage: (SQLiteCacheStorage) throws -> Void) async throws -> URL {
        let directory = TemporaryFolder.make("storechain")
        let harness = try CacheHarness.make(.disk, directory: directory)
        try await runAll(harness)
        await harness.chain.shutdown()
        try damage(SQLiteCacheStorage(path: directory.appending(path: "cache.sqlite").path))
        return directory
    }

    @Test func entriesHoldingValuesOfTheWrongTypeAreDroppedNotTrappedOn() async throws {
        // Regression: reading a row with GRDB's subscripts trapped on a value of the wrong type.
        let directory = try await Self.damagedCache { storage in
            try storage.modify { db in
                try db.execute(sql: "UPDATE nodes SET compressed = 'yes' WHERE rowid % 3 = 0")
                try db.execute(sql: "UPDATE nodes SET fetched_at = 'noon' WHERE rowid % 3 = 1")
                try db.execute(sql: "UPDATE queries SET payload = 42, raw_size = 'big'")
            }
        }
        let log = CapturedLog()
        let again = try CacheHarness.make(.disk, directory: directory, log: log)
        try await Self.runAll(again)
        #expect(log.text.contains("damaged entry"), "\(log.text)")
        let requests = again.backend.count()
        try await Self.runAll(again)
        #expect(again.backend.count() == requests, "the dropped entries were stored again and now answer")
    }

    @Test func aDamagedTableDefinitionIsRebuilt() async throws {
        // Regression: a column renamed by a flipped byte passed quick_check, and every read and
        // write failed from then on instead of the file being rebuilt.
        let directory = try await Self.damagedCache { storage in
            try storage.modify { db in
                try db.execute(sql: "PRAGMA writable_schema = ON")
                try db.execute(
                    sql: "UPDATE sqlite_master SET sql = replace(sql, 'payload', 'paylaod') WHERE name = 'nodes'")
            }
        }
        let log = CapturedLog()
        let again = try CacheHarness.make(.disk, directory: directory, log: log)
        try await Self.runAll(again)
        #expect(log.text.contains("not the ones this version writes"), "\(log.text)")
        let requests = again.backend.count()
        try await Self.runAll(again)
        #expect(again.backend.count() == requests, "the rebuilt file caches again")
    }
}
