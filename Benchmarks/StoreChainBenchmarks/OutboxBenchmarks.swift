import Benchmark
import Foundation
import GRDB
import StoreChain
import StoreChainSQLite

/// A backend that cannot be reached: every save through the outbox is acknowledged as pending.
private struct UnreachableBackend: StoreResponder {
    let name = "unreachable"

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        throw StoreChainError(.transport, "the backend cannot be reached")
    }
}

/// The cost of an acknowledged offline save (the outbox's durable write, its attempt to send,
/// the pending answer) against a plain durable SQLite insert of the same payload.
func outboxBenchmarks() {
    let folder = FileManager.default.temporaryDirectory.appending(path: "storechain-bench-outbox-\(UUID())")
    let update = Node(
        id: ObjectID(entity: "Band", key: .integer(42)),
        attributes: ["name": .string("Renamed band"), "country": .string("NO")])
    let saves = Benchmark.Configuration(maxDuration: .seconds(3), maxIterations: 1_000)

    Benchmark("Offline save: baseline durable SQLite insert of the same payload", configuration: saves) {
        benchmark in
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(
            path: folder.appending(path: "plain-\(UUID()).sqlite").path, configuration: configuration)
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE entries (id INTEGER PRIMARY KEY, changes BLOB NOT NULL)")
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            var changes = SaveChanges(updated: [update])
            changes.idempotencyKey = UUID().uuidString
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let payload = try encoder.encode(changes)
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO entries (changes) VALUES (?)", arguments: [payload])
            }
        }
    }
    Benchmark("Offline save: acknowledged as pending by the outbox", configuration: saves) { benchmark in
        let outbox = try OutboxHandler(
            model: hopModel,
            options: OutboxOptions(
                path: folder.appending(path: "outbox-\(UUID()).sqlite").path, retryDelay: .seconds(3600)))
        let chain = Chain(handlers: [outbox], terminal: UnreachableBackend(), tracing: nil)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await chain.send(.save(SaveChanges(updated: [update]))))
        }
        benchmark.stopMeasurement()
        await chain.shutdown(cancelling: true)
    }
}
