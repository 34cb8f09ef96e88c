import Benchmark
import Foundation
import GRDB
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite

/// A backend that cannot be reached: every save through the outbox is acknowledged as pending.
private struct UnreachableBackend: StoreResponder {
    let name = "unreachable"

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        throw StoreChainError(.transport, "the backend cannot be reached")
    }
}

/// A backend across a network: it takes every save after a fixed delay.
private struct DistantBackend: StoreResponder {
    let name = "distant"
    let latency: Duration

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        try await Task.sleep(for: latency)
        guard case .save(let changes) = request else {
            throw StoreChainError(.unavailable, "the benchmark backend only takes saves")
        }
        let result = SaveResult(nodes: changes.updated, deleted: changes.deleted)
        return StoreResponse(.saved(result), info: ResponseInfo(answeredBy: name, origin: .remote))
    }
}

/// The cost of an acknowledged offline save (the outbox's durable write, its attempt to send,
/// the pending answer) against a plain durable SQLite insert of the same payload.
func outboxBenchmarks() {
    let folder = temporaryFolder()
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

    // The reported case: a backend that refuses connections, reached through the remote
    // adapter with its default HTTP client and a retry handler (which does not retry saves).
    // The acknowledgement waited out AsyncHTTPClient's own connection retries, 10 s.
    Benchmark("Offline save: acknowledged as pending, the backend refusing connections", configuration: saves) {
        benchmark in
        let backend = try DemoBackend(bands: 2)
        let port = try await backend.start()
        await backend.stop()
        let remote = try RemoteResponder(
            model: backend.model, options: DemoRemoteOptions.v2(baseURL: URL(string: "http://127.0.0.1:\(port)")!))
        let outbox = try OutboxHandler(
            model: backend.model,
            options: OutboxOptions(
                path: folder.appending(path: "outbox-\(UUID()).sqlite").path, retryDelay: .seconds(3600)))
        let chain = Chain(handlers: [outbox, RetryHandler()], terminal: remote, tracing: nil)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await chain.send(.save(SaveChanges(updated: [update]))))
        }
        benchmark.stopMeasurement()
        await chain.shutdown(cancelling: true)
    }

    // Replaying 32 waiting updates of different objects from a backend 2 ms away: side by side
    // in 4 lanes against one after another (`parallel-replay: 1`).
    let replays = Benchmark.Configuration(maxDuration: .seconds(3), maxIterations: 20)
    for (subject, lanes) in [("baseline parallel-replay 1, in the order made", 1), ("parallel-replay 4", 4)] {
        Benchmark("Outbox replay of 32 saves: \(subject)", configuration: replays) { benchmark in
            let options = OutboxOptions(
                path: folder.appending(path: "replay-\(UUID()).sqlite").path, retryDelay: .seconds(3600),
                parallelReplay: lanes)
            // Recorded while the backend was out of reach (not measured).
            let offline = Chain(
                handlers: [try OutboxHandler(model: hopModel, options: options)], terminal: UnreachableBackend(),
                tracing: nil)
            for key in 0..<32 {
                let band = Node(id: ObjectID(entity: "Band", key: .integer(key)), attributes: ["name": "Renamed"])
                blackHole(try await offline.send(.save(SaveChanges(updated: [band]))))
            }
            await offline.shutdown(cancelling: true)
            let chain = Chain(
                handlers: [try OutboxHandler(model: hopModel, options: options)],
                terminal: DistantBackend(latency: .milliseconds(2)), tracing: nil)
            benchmark.startMeasurement()
            let left = try await chain.sync()
            benchmark.stopMeasurement()
            guard left == 0 else { throw StoreChainError(.unavailable, "the replay left \(left) saves unsent") }
            await chain.shutdown(cancelling: true)
        }
    }
}
