import Dispatch
import InMemoryTracing
import StoreChainTesting
import Synchronization
import Testing
import Tracing

@testable import StoreChain

/// A traced chain runs on its caller's executor, as an untraced one does. The tracing library's
/// `withSpan` and `TaskLocal.withValue` take closures that ran on the global executor, so every
/// span cost two executor hops from the main actor: a traced memory-cache hit took 37 µs instead
/// of 10 (release build). Counted here as jobs an actor's executor is given during the calls.
@Suite struct TracingIsolationTests {
    @Test func aTracedRequestFromAnActorStaysOnItsExecutor() async throws {
        let store = try MusicFixture.store()
        let chain = Chain(
            handlers: [MemoryCache(model: store.model)], terminal: store,
            tracing: ChainTracing(tracer: InMemoryTracer(recordInjections: false, recordExtractions: false)))
        let caller = Caller()
        let band = StoreRequest.objectFault(ObjectID(entity: "Band", key: 1))
        _ = try await caller.send(band, to: chain, times: 1)
        let jobs = try await caller.send(band, to: chain, times: 100)
        #expect(jobs == 0, "100 traced cache hits gave the caller's executor \(jobs) jobs: they left it")
    }

    @Test func aHandlersSpanStaysOnTheCallersExecutor() async throws {
        let context = Chain(
            terminal: InMemoryStore(model: try MusicFixture.store().model),
            tracing: ChainTracing(tracer: InMemoryTracer(recordInjections: false, recordExtractions: false))
        ) {}.makeContext()
        let jobs = try await Caller().run(times: 100) {
            try await context.withSpan("test.work") { span in
                #expect(span != nil, "the context traces")
            }
        }
        #expect(jobs == 0, "100 spans gave the caller's executor \(jobs) jobs")
    }
}

/// An actor whose executor counts the jobs it is given: one a call comes back to it after
/// leaving.
private actor Caller {
    private let executor = CountingExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Sends `request` `times` times; returns how many jobs the executor was given meanwhile.
    func send(_ request: StoreRequest, to chain: Chain, times: Int) async throws -> Int {
        try await run(times: times) { _ = try await chain.send(request) }
    }

    func run(times: Int, _ body: () async throws -> Void) async throws -> Int {
        let before = executor.jobs.load(ordering: .relaxed)
        for _ in 0..<times { try await body() }
        return executor.jobs.load(ordering: .relaxed) - before
    }
}

private final class CountingExecutor: SerialExecutor {
    let jobs = Atomic<Int>(0)
    private let queue = DispatchQueue(label: "counting-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
