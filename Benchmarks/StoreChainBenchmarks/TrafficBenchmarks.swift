import Benchmark
import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import Synchronization

func trafficBenchmarks() {
    listScreenBenchmarks()
    rateLimiterBenchmarks()
}

/// A list screen showing three screens of 25 tracks, then 200 favourite tracks read by ID.
private func listScreenBenchmarks() {
    let slow = Benchmark.Configuration(maxDuration: .seconds(2), maxIterations: 50)
    let favourites = (1...200).map { ObjectID(entity: "Track", key: .integer($0 * 6)) }
    @Sendable func workload(_ chain: Chain, model: ObjectModel) async throws {
        let context = ObjectContext(chain: chain, model: model)
        for screen in 0..<3 {
            blackHole(
                try await context.fetch(FetchRequest(entity: "Track", fetchLimit: 25, fetchOffset: 100 + screen * 25)))
        }
        for track in context.objects(with: favourites) { blackHole(try await track.value("title")) }
    }
    Benchmark("List-screen workload: baseline the 5 least requests, by hand", configuration: slow) { benchmark in
        let (backend, url) = try await SharedDemoBackend.shared.start()
        let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: url))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for screen in 0..<3 {
                let page = PageRequest(.record(100 + screen * 25), size: 25)
                blackHole(
                    try await remote.respond(to: .page(FetchRequest(entity: "Track"), page), context: RequestContext()))
            }
            for batch in [favourites[..<100], favourites[100...]] {
                let keys = batch.compactMap(\.key).map { $0.description }.joined(separator: ", ")
                let request = FetchRequest(entity: "Track", predicate: try FetchPredicate("id IN {\(keys)}"))
                blackHole(try await remote.respond(to: .fetch(request), context: RequestContext()))
            }
        }
    }
    Benchmark("List-screen workload: pagination + batching", configuration: slow) { benchmark in
        let (backend, url) = try await SharedDemoBackend.shared.start()
        let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: url))
        let chain = Chain(terminal: remote) {
            PaginationHandler(model: backend.model, options: .init(pageSize: 25))
            BatchingHandler(model: backend.model, options: BatchingOptions(entities: ["Track"]))
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { try await workload(chain, model: backend.model) }
    }
    // One run is enough: it reads every track page three times and faults 200 tracks one by one
    // (about 25 s here), and the point is the order of magnitude.
    let once = Benchmark.Configuration(warmupIterations: 0, maxDuration: .seconds(1), maxIterations: 1)
    Benchmark("List-screen workload: neither", configuration: once) { benchmark in
        let (backend, url) = try await SharedDemoBackend.shared.start()
        let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: url))
        let chain = Chain(handlers: [], terminal: remote)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { try await workload(chain, model: backend.model) }
    }
}

/// The rate limiter's own cost when it never has to wait: 64 concurrent callers taking and
/// giving back a slot.
private func rateLimiterBenchmarks() {
    let many = Benchmark.Configuration(scalingFactor: .kilo)
    let callers = 64
    Benchmark("Rate limiter, 64 callers: baseline a counter behind a Mutex", configuration: many) { benchmark in
        let counter = Counter()
        let rounds = benchmark.scaledIterations.count / callers + 1
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    for _ in 0..<rounds {
                        counter.value.withLock { $0 += 1 }
                        counter.value.withLock { $0 -= 1 }
                    }
                }
            }
        }
        blackHole(counter.value.withLock { $0 })
    }
    Benchmark("Rate limiter, 64 callers: acquire and release", configuration: many) { benchmark in
        let limiter = RateLimiter(options: .init(rate: 1e12, burst: 1_000_000, maxInFlight: 1_000))
        let context = RequestContext()
        let rounds = benchmark.scaledIterations.count / callers + 1
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    for _ in 0..<rounds {
                        try await limiter.acquire(context: context)
                        limiter.release()
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// A shared counter for the baseline.
private final class Counter: Sendable {
    let value = Mutex(0)
}
