import Benchmark
import Foundation
import Logging
import PostgresNIO
import StoreChain
import StoreChainPostgres
import Synchronization

/// What sharing state through PostgreSQL costs, each against a bare postgres-nio statement on a
/// connection of its own in the same run: a shared-cache hit against a `SELECT` of the same row,
/// and a shared rate-limit permit (one atomic `UPDATE`) against a `SELECT 1` round trip. The
/// server is `STORECHAIN_POSTGRES_URL` (`.ci/run` starts a throwaway cluster and sets it; by
/// hand: `eval "$(bash Scripts/postgres.sh start)"` in the repository's root first).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput], maxDuration: .seconds(3), maxIterations: 10_000)
    guard let url = ProcessInfo.processInfo.environment["STORECHAIN_POSTGRES_URL"], !url.isEmpty else {
        fatalError(
            "no PostgreSQL server for the benchmarks: STORECHAIN_POSTGRES_URL is not set; start a throwaway "
                + #"cluster with `eval "$(bash Scripts/postgres.sh start)"` in the repository's root"#)
    }
    do {
        try postgresBenchmarks(url: url)
    } catch {
        fatalError("the PostgreSQL benchmarks failed: \(error)")
    }
}

private let model: ObjectModel = {
    do {
        return try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
    } catch {
        fatalError("benchmark model is invalid: \(error)")
    }
}()

private let band42 = ObjectID(entity: "Band", key: 42)
private let unreachable = NextResponder { request, _ in
    throw StoreChainError(.unavailable, "\(request) was not answered by the cache")
}

private func postgresBenchmarks(url: String) throws {
    let address = try PostgresAddress(url: url)
    let schema = "b" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    let context = RequestContext()
    let bare = BareConnection(address: address)

    var write = CacheWrite()
    write.nodes = (0..<100).map {
        Node(
            id: ObjectID(entity: "Band", key: .integer($0)),
            attributes: ["id": .integer($0), "name": .string("Band \($0)")],
            freshness: Freshness(expiresAt: .distantFuture))
    }
    let rowKey = #"Band/{"integer":42}"#
    let cache = try PostgresCache(
        model: model, database: PostgresCacheDatabase(url: url, schema: schema, namespace: "bench"))
    Benchmark("Shared cache hit: baseline bare postgres-nio SELECT of the row") { benchmark in
        _ = try await cache.storage.write(write)
        let connection = try await bare.connection()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(
                try await connection.query(
                    """
                    SELECT id, payload, freshness FROM \(unescaped: schema).nodes
                    WHERE namespace = \("bench") AND id = \(rowKey)
                    """, logger: bare.logger
                ).collect())
        }
    }
    Benchmark("Shared cache hit: object fault through the handler") { benchmark in
        _ = try await cache.storage.write(write)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await cache.handle(.objectFault(band42), context: context, next: unreachable))
        }
    }

    // A rate no caller ever waits for: the figure is the permit's own cost.
    let options = RateLimitOptions(rate: 1e9, burst: 1_000_000)
    let shared = RateLimiter(
        options: options, shared: try PostgresSharedRateLimit(address: address, key: "bench", schema: schema))
    let local = RateLimiter(options: options)
    Benchmark("Shared permit: baseline bare postgres-nio SELECT 1") { benchmark in
        let connection = try await bare.connection()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await connection.query("SELECT 1", logger: bare.logger).collect())
        }
    }
    Benchmark("Shared permit: rate-limit permit from PostgreSQL") { benchmark in
        try await shared.acquire(context: context)
        shared.release()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try await shared.acquire(context: context)
            shared.release()
        }
    }
    Benchmark("Shared permit: rate-limit permit in this process") { benchmark in
        for _ in benchmark.scaledIterations {
            try await local.acquire(context: context)
            local.release()
        }
    }
}

/// One postgres-nio connection of the benchmarks' own, opened on first use.
private final class BareConnection: Sendable {
    let address: PostgresAddress
    let logger = Logger(label: "storechain.benchmarks")
    private let opened = Mutex<PostgresConnection?>(nil)

    init(address: PostgresAddress) { self.address = address }

    func connection() async throws -> PostgresConnection {
        if let connection = opened.withLock({ $0 }) { return connection }
        let configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.username, password: address.password,
            database: address.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        opened.withLock { $0 = connection }
        return connection
    }
}
