import Foundation
import GRDB
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// Crash safety: a child writes through a disk cache over a SQLite store and is killed with
/// SIGKILL at random moments; after every kill both files pass `PRAGMA integrity_check` and
/// hold every write the child reported as committed.
///
/// `swift test` runs a few kills; `Scripts/reliability.sh` runs many
/// (`STORECHAIN_CRASH_KILLS`, `STORECHAIN_CRASH_SEED` to replay a run).
@Suite struct CrashSafetyTests {
    struct Committed {
        let band: ObjectID
        let album: ObjectID
        let name: String
    }

    static let environment = ProcessInfo.processInfo.environment
    static let kills = Int(environment["STORECHAIN_CRASH_KILLS"] ?? "") ?? 5

    @Test func killedWritersLoseNothingTheyReportedCommitted() async throws {
        let seed = UInt64(Self.environment["STORECHAIN_CRASH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder.make("storechain-crash")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storePath = folder.appending(path: "store.sqlite").path
        let cachePath = folder.appending(path: "cache.sqlite").path
        let writer = try CommandRunner.executable(named: "storechain-crash-writer")
        let model = try MusicFixture.model()
        var committed: [Committed] = []
        for round in 1...Self.kills {
            let delay = Duration.milliseconds(Int.random(in: 1...400, using: &random))
            let outcome = try await KilledChild.run(
                writer, arguments: [storePath, cachePath, "run\(round)"], killAfter: delay)
            try #require(
                outcome.wasKilled && outcome.lines.first == "ready",
                "seed \(seed), round \(round): the writer did not run until killed: \(outcome.stderr)")
            for line in outcome.lines.dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count == 4, fields[0] == "committed", let band = Int(fields[1]),
                    let album = Int(fields[2])
                else {
                    Issue.record("seed \(seed): unexpected line from the writer: \(line)")
                    continue
                }
                committed.append(
                    Committed(
                        band: ObjectID(entity: "Band", key: .integer(band)),
                        album: ObjectID(entity: "Album", key: .integer(album)), name: String(fields[3])))
            }
            try Self.checkIntegrity(storePath, seed: seed, round: round)
            try Self.checkIntegrity(cachePath, seed: seed, round: round)
            try Self.checkStore(storePath, model: model, holds: committed, seed: seed)
            try await Self.checkCache(cachePath, model: model, holds: committed, seed: seed)
        }
        #expect(committed.count > 0, "seed \(seed): no write was committed before any kill")
        print(
            "reliability: crash-safety kills=\(Self.kills) survived=\(Self.kills) committed=\(committed.count) seed=\(seed)"
        )
    }

    static func checkIntegrity(_ path: String, seed: UInt64, round: Int) throws {
        let queue = try DatabaseQueue(path: path)
        let result = try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        try queue.close()
        #expect(result == ["ok"], "seed \(seed), round \(round): \(path) failed integrity_check: \(result)")
    }

    static func checkStore(_ path: String, model: ObjectModel, holds committed: [Committed], seed: UInt64) throws {
        let store = try SQLiteStore(path: path, model: model)
        for write in committed {
            let band = store.node(for: write.band)
            #expect(band?.attributes["name"] == .string(write.name), "seed \(seed): \(write.band) was lost")
            let album = store.node(for: write.album)
            #expect(album?.relationships["band"]?.objectIDs == [write.band], "seed \(seed): \(write.album) was lost")
        }
    }

    static func checkCache(_ path: String, model: ObjectModel, holds committed: [Committed], seed: UInt64) async throws
    {
        let storage = SQLiteCacheStorage(path: path, model: model)
        let cached = try await storage.nodes(committed.flatMap { [$0.band, $0.album] })
        for write in committed {
            #expect(cached[write.band]?.attributes["name"] == .string(write.name), "seed \(seed): \(write.band) lost")
            #expect(cached[write.album] != nil, "seed \(seed): \(write.album) lost from the cache")
        }
    }
}
