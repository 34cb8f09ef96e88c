import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Reliability: many concurrent tasks fetch, fault, save and observe through a full chain
/// against the demo backend with its quirks on; at the end every answer agreed with the
/// backend's store, no acknowledged save is missing, and nothing is left running after shutdown.
///
/// `swift test` runs a short soak; `Scripts/reliability.sh` a long one
/// (`STORECHAIN_SOAK_OPERATIONS` per task).
@Suite struct SoakTests {
    static let operations = Int(ProcessInfo.processInfo.environment["STORECHAIN_SOAK_OPERATIONS"] ?? "") ?? 25
    /// A new seed each run, printed so that a failing run can be replayed with
    /// `STORECHAIN_SOAK_SEED`.
    static let seed =
        UInt64(ProcessInfo.processInfo.environment["STORECHAIN_SOAK_SEED"] ?? "") ?? UInt64.random(in: 1...999_999)
    static let tasks = 8

    struct Tally: Sendable {
        var fetches = 0
        var faults = 0
        var saves = 0
        var failedSaves = 0
        var observations = 0
        var saved: [String] = []
    }

    final class Tallies: Sendable {
        private let state = Locked(Tally())
        func withLock<T: Sendable>(_ body: (inout Tally) -> T) -> T { state.withLock { body(&$0) } }
    }

    @Test func concurrentWorkThroughAFullChainKeepsItsInvariants() async throws {
        print("reliability: soak seed \(Self.seed) (replay with STORECHAIN_SOAK_SEED=\(Self.seed))")
        let backendTests = DemoBackendTests()
        let quirks = DemoQuirks(latency: .milliseconds(1), failEvery: 13)
        try await backendTests.withBackend(quirks: quirks) { backend, base in
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(terminal: remote) {
                MemoryCache(model: backend.model)
                PaginationHandler(model: backend.model, options: PaginationOptions(pageSize: 50))
                RetryHandler(options: RetryOptions(maxAttempts: 6, baseDelay: .milliseconds(5)))
                BatchingHandler(model: backend.model, options: BatchingOptions(entities: ["Track"]))
            }
            let tally = Tallies()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<Self.tasks {
                    group.addTask {
                        let context = ObjectContext(chain: chain, model: backend.model)
                        var generator = MusicRequestGenerator(seed: Self.seed &+ UInt64(task))
                        for step in 0..<Self.operations {
                            try await Self.operate(
                                step: step, task: task, generator: &generator, chain: chain, context: context,
                                backend: backend, backendTests: backendTests, tally: tally)
                        }
                    }
                }
                try await group.waitForAll()
            }
            await chain.shutdown()
            #expect(chain.background.count == 0, "no background work is left after shutdown")
            let result = tally.withLock { $0 }
            let names = Set(
                backend.store.snapshot.nodes(of: "Band").compactMap { node -> String? in
                    if case .string(let name) = node.attributes["name"] { name } else { nil }
                })
            let lost = result.saved.filter { !names.contains($0) }
            #expect(lost.isEmpty, "acknowledged saves missing from the backend: \(lost)")
            #expect(result.saves > 0 && result.fetches > 0 && result.faults > 0 && result.observations > 0)
            print(
                "reliability: soak tasks=\(Self.tasks) operations=\(Self.tasks * Self.operations)"
                    + " fetches=\(result.fetches) faults=\(result.faults) saves=\(result.saves)"
                    + " failed-saves=\(result.failedSaves) observations=\(result.observations) lost-saves=\(lost.count)"
                    + " backend-requests=\(backend.stats.requests) by route: "
                    + backend.stats.requestsByRoute.sorted { $0.value > $1.value }.prefix(6).map {
                        "\($0.key) \($0.value)"
                    }
                    .joined(separator: ", ")
            )
        }
    }

    static func operate(
        step: Int, task: Int, generator: inout MusicRequestGenerator, chain: Chain, context: ObjectContext,
        backend: DemoBackend, backendTests: DemoBackendTests, tally: Tallies
    ) async throws {
        switch generator.int(4) {
        case 0:
            // Bands change under the soak's own saves; albums and tracks do not.
            var request = try generator.request()
            while request.entity == "Band" { request = try generator.request() }
            let answer = backendTests.comparable(try await chain.fetch(request))
            let expected = backendTests.comparable(try backend.store.fetch(request))
            #expect(answer == expected, "seed \(seed): \(request)\nanswered:\n\(answer)\nexpected:\n\(expected)")
            tally.withLock { $0.fetches += 1 }
        case 1:
            let id = ObjectID(entity: "Track", key: .integer(1 + generator.int(200)))
            let node = try await chain.send(.objectFault(id)).objectNode()
            #expect(node == backend.store.node(for: id), "\(id)")
            tally.withLock { $0.faults += 1 }
        case 2:
            let name = "soak-\(task)-\(step)"
            _ = try context.insert("Band", values: ["name": .string(name), "country": "NZ"])
            do {
                try await context.save()
                tally.withLock {
                    $0.saves += 1
                    $0.saved.append(name)
                }
            } catch let error as StoreChainError {
                // A POST is not retried (it is not idempotent); the failed save is the app's to
                // redo, and it must say why.
                #expect(error.message.contains("answered 500"), "\(error)")
                context.rollback()
                tally.withLock { $0.failedSaves += 1 }
            }
        default:
            let request = FetchRequest(
                entity: "Album", predicate: try FetchPredicate("band.id == %d", 1 + generator.int(20)))
            var iterator = context.observe(request).makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.count == (try backend.store.fetch(request)).objectCount)
            tally.withLock { $0.observations += 1 }
        }
    }
}

extension FetchResult {
    fileprivate var objectCount: Int? {
        if case .objects(let nodes) = self { nodes.count } else { nil }
    }
}
