import Benchmark
import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import Synchronization

func changeFeedBenchmarks() {
    deliveryBenchmarks()
    churnBenchmarks()
}

/// A demo backend of its own (its albums are renamed here), started once.
private final class FeedBackend: Sendable {
    static let shared = FeedBackend()
    private let state = Mutex<(DemoBackend, URL)?>(nil)

    func start() async throws -> (DemoBackend, URL) {
        if let running = state.withLock({ $0 }) { return running }
        let backend = try DemoBackend(bands: 40)
        let url = try await startBackend(backend)
        state.withLock { $0 = (backend, url) }
        return (backend, url)
    }
}

/// The title one chain last saw for an album, and a way to wait until it is a given one. A wait
/// ends with an error after a minute, or when the observation ends, so a change that never
/// arrives fails the run with a message instead of hanging it.
private final class TitleWatch: Sendable {
    private struct State {
        var title: String?
        var waiting: [(String, CheckedContinuation<Void, any Error>)] = []
        var ended: (any Error)?
    }

    struct NotSeen: Error, CustomStringConvertible {
        let title: String
        let why: String
        var description: String { "the observer did not see the title \(title): \(why)" }
    }

    private let state = Mutex(State())

    func saw(_ title: String?) {
        let due = state.withLock { state in
            state.title = title
            let due = state.waiting.filter { $0.0 == title }.map(\.1)
            state.waiting.removeAll { $0.0 == title }
            return due
        }
        for waiter in due { waiter.resume() }
    }

    /// The observation ended (with `error`, or none): every wait fails.
    func ended(_ error: (any Error)?) {
        let why = NotSeen(title: "", why: "the observation ended (\(error.map { "\($0)" } ?? "no error"))")
        let waiting = state.withLock { state in
            state.ended = why
            defer { state.waiting = [] }
            return state.waiting
        }
        for (_, waiter) in waiting { waiter.resume(throwing: why) }
    }

    func wait(for title: String) async throws {
        let limit = Task {
            try await Task.sleep(for: .seconds(60))
            let late = state.withLock { state in
                defer { state.waiting.removeAll { $0.0 == title } }
                return state.waiting.filter { $0.0 == title }.map(\.1)
            }
            for waiter in late { waiter.resume(throwing: NotSeen(title: title, why: "not within a minute")) }
        }
        defer { limit.cancel() }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let now: Result<Bool, any Error> = state.withLock { state in
                if let ended = state.ended { return .failure(ended) }
                if state.title == title { return .success(true) }
                state.waiting.append((title, waiter))
                return .success(false)
            }
            switch now {
            case .success(true): waiter.resume()
            case .success(false): break
            case .failure(let error): waiter.resume(throwing: error)
            }
        }
    }
}

/// Starts `backend` and returns its address.
private func startBackend(_ backend: DemoBackend) async throws -> URL {
    let port = try await backend.start()
    guard let url = URL(string: "http://127.0.0.1:\(port)") else { fatalError("no URL for port \(port)") }
    return url
}

private let watched = ObjectID(entity: "Album", key: .integer(7))

/// Renames the watched album through the backend's API, as another client would.
private func rename(_ remote: RemoteResponder, to title: String) async throws {
    let save = SaveChanges(updated: [Node(id: watched, attributes: ["title": .string(title)])])
    blackHole(try await remote.respond(to: .save(save), context: RequestContext()))
}

/// The time from a save by one client to another chain's app seeing it: through the change feed
/// (an observer in a chain following `GET /v2/changes`, long-polled, or `GET /v2/events`, server-
/// sent events, over loopback), and, as the
/// baseline, an app that asks the backend again every second (what a cache ttl of 1 s amounts
/// to): half a second on average.
/// Each sample is one change; the report gives p50 and p99.
private func deliveryBenchmarks() {
    let changes = Benchmark.Configuration(metrics: [.wallClock], maxDuration: .seconds(5), maxIterations: 200)
    let watchers = Mutex<[String: (Chain, TitleWatch, Task<Void, any Error>)]>([:])
    // The same observer in a chain following `GET /v2/changes` (long-polled) and `GET /v2/events`
    // (server-sent events, one connection held open).
    let feeds: [(String, @Sendable (URL) -> RemoteOptions)] = [
        ("through the change feed", DemoRemoteOptions.v2), ("through the event stream", DemoRemoteOptions.v2Stream),
    ]
    for (subject, options) in feeds {
        Benchmark("Change delivery: save to observer \(subject)", configuration: changes) { benchmark in
            let (backend, url) = try await FeedBackend.shared.start()
            let writer = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: url))
            let watch = try await watchers.startOnce(subject) {
                let remote = try RemoteResponder(model: backend.model, options: options(url))
                let chain = Chain(terminal: remote) {
                    ChangeFeedHandler()
                    MemoryCache(model: backend.model)
                }
                let watch = TitleWatch()
                let observation = ObjectContext(chain: chain, model: backend.model)
                    .observe(FetchRequest(entity: "Album", predicate: try FetchPredicate("id == 7")))
                let task = Task {
                    do {
                        for try await objects in observation {
                            watch.saw(try await objects.first?.value("title").stringValue)
                        }
                        watch.ended(nil)
                    } catch {
                        watch.ended(error)
                        throw error
                    }
                }
                return (chain, watch, task)
            }
            let title = "Feed \(UUID().uuidString)"
            benchmark.startMeasurement()
            try await rename(writer, to: title)
            try await watch.wait(for: title)
        }
    }
    // Each sample starts at a random moment of the poller's second, as a change made by another
    // client would (one right after the poller's last request would always wait a whole second).
    let polling = Benchmark.Configuration(metrics: [.wallClock], maxDuration: .seconds(12), maxIterations: 200)
    Benchmark("Change delivery: baseline polling every second", configuration: polling) { benchmark in
        let (backend, url) = try await FeedBackend.shared.start()
        let writer = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: url))
        let watch = try await watchers.startOnce("poll") {
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: url))
            let chain = Chain(handlers: [], terminal: remote)
            let watch = TitleWatch()
            let request = FetchRequest(entity: "Album", predicate: try FetchPredicate("id == 7"))
            let task = Task {
                while !Task.isCancelled {
                    if case .objects(let nodes) = try await chain.fetch(request) {
                        watch.saw(nodes.first?[attribute: "title"].stringValue)
                    }
                    try await Task.sleep(for: .seconds(1))
                }
            }
            return (chain, watch, task)
        }
        let title = "Poll \(UUID().uuidString)"
        try await Task.sleep(for: .milliseconds(Int.random(in: 0..<1_000)))
        benchmark.startMeasurement()
        try await rename(writer, to: title)
        try await watch.wait(for: title)
    }
}

extension Mutex where Value == [String: (Chain, TitleWatch, Task<Void, any Error>)] {
    /// The watcher named `name`, started by `start` the first time it is asked for.
    fileprivate func startOnce(
        _ name: String, _ start: () async throws -> (Chain, TitleWatch, Task<Void, any Error>)
    ) async throws -> TitleWatch {
        if let running = withLock({ $0[name] }) { return running.1 }
        let started = try await start()
        withLock { $0[name] = started }
        return started.1
    }
}

/// What ten seconds of `--churn 10` (100 changes to random albums and tracks) cost in upstream
/// requests for an app observing five fetches: following the change feed, long-polled or as an
/// event stream (each observer sees a
/// change within milliseconds), against polling each fetch every second (a cache ttl of 1 s:
/// changes seen within a second). Reported as the custom metric `upstream-requests`.
private func churnBenchmarks() {
    let once = Benchmark.Configuration(
        metrics: [.wallClock, .custom("upstream-requests", polarity: .prefersSmaller, useScalingFactor: false)],
        warmupIterations: 0, maxDuration: .seconds(1), maxIterations: 1)
    let fetches = [
        ("Album", "price > 15"), ("Album", "band.id == 1"), ("Track", "title BEGINSWITH 'Take 1'"),
        ("Band", "name BEGINSWITH[c] 'a'"), ("Album", "year >= 2000"),
    ]
    func requests(_ fetches: [(String, String)]) throws -> [FetchRequest] {
        try fetches.map { FetchRequest(entity: $0.0, predicate: try FetchPredicate($0.1)) }
    }
    let feeds: [(String, @Sendable (URL) -> RemoteOptions)] = [
        ("with the change feed", DemoRemoteOptions.v2), ("with the event stream", DemoRemoteOptions.v2Stream),
    ]
    for (subject, options) in feeds {
        Benchmark("Churn 10s, 5 observed fetches: \(subject)", configuration: once) { benchmark in
            try await measureChurn(benchmark, options: options) { model in
                [
                    ChangeFeedHandler(), MemoryCache(model: model),
                    PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)),
                ]
            } app: { chain, model in
                let context = ObjectContext(chain: chain, model: model)
                return try requests(fetches).map { request in
                    Task {
                        for try await objects in context.observe(request) { blackHole(objects) }
                    }
                }
            }
        }
    }
    Benchmark("Churn 10s, 5 observed fetches: baseline polling every second", configuration: once) { benchmark in
        try await measureChurn(benchmark) { model in
            [
                MemoryCache(model: model, options: CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(1)))),
                PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)),
            ]
        } app: { chain, _ in
            try requests(fetches).map { request in
                Task {
                    while !Task.isCancelled {
                        blackHole(try await chain.fetch(request))
                        try await Task.sleep(for: .seconds(1))
                    }
                }
            }
        }
    }
}

/// Starts a backend of 40 bands and a chain of `handlers` over its v2 API (`options`), starts
/// the `app`'s tasks, lets them settle for a second, then records as `upstream-requests` what
/// 10 s of `churn(perSecond: 10)` cost.
private func measureChurn(
    _ benchmark: Benchmark, options: (URL) -> RemoteOptions = DemoRemoteOptions.v2,
    handlers: (ObjectModel) -> [any StoreHandler], app: (Chain, ObjectModel) throws -> [Task<Void, any Error>]
) async throws {
    let backend = try DemoBackend(bands: 40)
    let url = try await startBackend(backend)
    let remote = try RemoteResponder(model: backend.model, options: options(url))
    let chain = Chain(handlers: handlers(backend.model), terminal: remote)
    let tasks = try app(chain, backend.model)
    try await Task.sleep(for: .seconds(1))
    let before = remote.traffic.requests
    benchmark.startMeasurement()
    let churn = Task { await backend.churn(perSecond: 10) }
    try await Task.sleep(for: .seconds(10))
    churn.cancel()
    benchmark.stopMeasurement()
    benchmark.measurement(.custom("upstream-requests"), remote.traffic.requests - before)
    for task in tasks { task.cancel() }
    await chain.shutdown(cancelling: true)
    await backend.stop()
}
