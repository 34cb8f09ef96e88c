import Benchmark
import Foundation
import GRDB
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import Synchronization

private let cachedBands: [Node] = (0..<100).map {
    Node(
        id: ObjectID(entity: "Band", key: .integer($0)),
        attributes: ["id": .integer($0), "name": .string("Band \($0)")],
        freshness: Freshness(expiresAt: .distantFuture))
}

private let band42 = ObjectID(entity: "Band", key: 42)
private let unreachable = NextResponder { request, _ in
    throw StoreChainError(.unavailable, "\(request) was not answered by the cache")
}

/// The demo backend, started once for the benchmarks that need HTTP.
final class SharedDemoBackend: Sendable {
    static let shared = SharedDemoBackend()
    private let state = Mutex<(DemoBackend, URL)?>(nil)

    func start() async throws -> (DemoBackend, URL) {
        if let running = state.withLock({ $0 }) { return running }
        let backend = try DemoBackend(bands: 200)
        let port = try await backend.start()
        guard let url = URL(string: "http://127.0.0.1:\(port)") else { fatalError("no URL for port \(port)") }
        state.withLock { $0 = (backend, url) }
        return (backend, url)
    }
}

func cacheBenchmarks() {
    let hits = Benchmark.Configuration(scalingFactor: .kilo)
    let context = RequestContext()
    var write = CacheWrite()
    write.nodes = cachedBands

    let dictionary = Mutex(Dictionary(uniqueKeysWithValues: cachedBands.map { ($0.id, $0) }))
    Benchmark("Memory cache hit: baseline Dictionary behind a Mutex", configuration: hits) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(dictionary.withLock { $0[band42] }) }
    }
    // The cheapest async answer there is, a lookup behind a lock answered through the responder
    // API: the least any handler's hit can cost.
    let answering = InMemoryStore(model: hopModel, nodes: cachedBands)
    Benchmark("Memory cache hit: floor, an object fault answered by InMemoryStore", configuration: hits) {
        benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await answering.respond(to: .objectFault(band42), context: context))
        }
    }
    let memory = MemoryCache(model: hopModel)
    Benchmark("Memory cache hit: object fault through the handler", configuration: hits) { benchmark in
        _ = await memory.storage.write(write)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await memory.handle(.objectFault(band42), context: context, next: unreachable))
        }
    }

    // The same hit from the main actor, as an app's UI code makes it: no executor hop.
    Benchmark("Memory cache hit from main actor: baseline from a task", configuration: hits) { benchmark in
        _ = await memory.storage.write(write)
        try await sendFromTask(benchmark) {
            try await memory.handle(.objectFault(band42), context: context, next: unreachable)
        }
    }
    Benchmark("Memory cache hit from main actor: object fault through the handler", configuration: hits) {
        benchmark in
        _ = await memory.storage.write(write)
        try await sendFromMainActor(MeasuredBenchmark(benchmark: benchmark)) {
            try await memory.handle(.objectFault(band42), context: context, next: unreachable)
        }
    }

    let path = temporaryPath("cache.sqlite")
    let disk = DiskCache(model: hopModel, path: path)
    let rawPool = try? DatabasePool(path: path)
    let rowKey = #"Band/{"integer":42}"#
    Benchmark("Disk cache hit: baseline raw GRDB SELECT of the row", configuration: hits) { benchmark in
        guard let rawPool else { fatalError("cannot open \(path)") }
        _ = try await disk.storage.write(write)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(
                try rawPool.read { db in
                    try Row.fetchOne(db, sql: "SELECT payload FROM nodes WHERE id = ?", arguments: [rowKey])
                })
        }
    }
    Benchmark("Disk cache hit: object fault through the handler", configuration: hits) { benchmark in
        _ = try await disk.storage.write(write)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await disk.handle(.objectFault(band42), context: context, next: unreachable))
        }
    }

    let fifty = FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("name")], fetchLimit: 50)
    let prepared = Mutex<(RemoteResponder, Chain)?>(nil)
    /// Starts the backend and warms the caches once; measuring starts after it.
    @Sendable func prepare() async throws -> (RemoteResponder, Chain) {
        if let ready = prepared.withLock({ $0 }) { return ready }
        let (backend, url) = try await SharedDemoBackend.shared.start()
        let responder = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: url))
        let diskPath = temporaryPath("c.sqlite")
        let chain = Chain(terminal: responder) {
            MemoryCache(model: backend.model)
            DiskCache(model: backend.model, path: diskPath)
        }
        _ = try await chain.fetch(fifty)
        prepared.withLock { $0 = (responder, chain) }
        return (responder, chain)
    }
    let http = Benchmark.Configuration(maxDuration: .seconds(3), maxIterations: 300)
    Benchmark("Warm fetch of 50: baseline straight to the demo backend over HTTP", configuration: http) { benchmark in
        let (responder, _) = try await prepare()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await responder.respond(to: .fetch(fifty), context: context))
        }
    }
    Benchmark("Warm fetch of 50: memory + disk + remote", configuration: http) { benchmark in
        let (_, chain) = try await prepare()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try await chain.fetch(fifty)) }
    }
}
