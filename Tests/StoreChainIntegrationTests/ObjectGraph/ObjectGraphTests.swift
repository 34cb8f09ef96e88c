import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainSQLite
import StoreChainTesting
import Testing

/// The object graph held to the standard of fetches: random sequences of inserts, updates,
/// relationship changes, deletes (nullify, and cascade from an album to its tracks), saves,
/// rollbacks, fetches with key paths, sorts and windows, counts, ID fetches, value and
/// relationship reads, over three contexts, with restarts over the same disk cache; every read
/// is compared with a plain reference graph, and after every save the backend's data too.
///
/// A new seed each run, printed; `STORECHAIN_GRAPH_SEED` replays one and
/// `STORECHAIN_GRAPH_OPERATIONS` sets the steps per seed and chain (`Scripts/reliability.sh`
/// runs a long form). A failing sequence is shortened before it is reported.
@Suite struct ObjectGraphTests {
    static let environment = ProcessInfo.processInfo.environment
    static let operations = Int(environment["STORECHAIN_GRAPH_OPERATIONS"] ?? "") ?? 120
    static let seeds: [UInt64] =
        environment["STORECHAIN_GRAPH_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? (0..<3).map { _ in UInt64.random(in: 1...999_999) }
    static let contexts = 3
    /// Whether contexts observe queries (on unless `STORECHAIN_GRAPH_OBSERVE=0`): an
    /// observation's refetch runs beside the next steps, which is how the oracle found a
    /// refetch that went upstream before a save storing its answer after it.
    static let observes = environment["STORECHAIN_GRAPH_OBSERVE"] != "0"

    /// The demo catalog's model, with an album's tracks deleted with it.
    static func model() throws -> ObjectModel {
        let tracks = "tracks: { to-many: Track, inverse: album, ordered: true }"
        let text = DemoCatalogModel.text.replacingOccurrences(
            of: tracks, with: "tracks: { to-many: Track, inverse: album, ordered: true, delete: cascade }")
        #expect(text != DemoCatalogModel.text, "the demo model still declares an album's tracks as the test expects")
        return try ModelFile.parse(text, source: "graph.model.yml")
    }

    static func nodes(of store: InMemoryStore) -> [Node] {
        let snapshot = store.snapshot
        return ["Band", "Album", "Track"].flatMap { snapshot.nodes(of: $0) }
    }

    /// Makes a setup, runs `body` with it, and cleans up.
    typealias SetupMaker = (_ body: (GraphSetup) async throws -> Void) async throws -> Void

    static func inMemory(caches: Bool, wholeFetches: Bool = true) -> SetupMaker {
        { body in
            let model = try model()
            let data = try DemoBackend(bands: 3).store.snapshot
            let store = InMemoryStore(model: model, dataset: data)
            let elsewhere = GraphElsewhere(store: store)
            try await body(
                GraphSetup(
                    name: caches
                        ? "in-memory store with a memory cache" + (wholeFetches ? "" : ", windows only")
                        : "in-memory store",
                    model: model,
                    makeChain: {
                        Chain(
                            handlers: [elsewhere.handler()] + (caches ? [MemoryCache(model: model)] : []),
                            terminal: store)
                    },
                    backendNodes: { nodes(of: store) }, restarts: false, wholeFetches: wholeFetches,
                    elsewhere: elsewhere))
        }
    }

    /// The in-memory store behind a memory cache and an outbox, with a network that the
    /// offline and online steps take down and bring back.
    static func inMemoryWithOutbox() -> SetupMaker {
        { body in
            let model = try model()
            let store = InMemoryStore(model: model, dataset: try DemoBackend(bands: 3).store.snapshot)
            let folder = TemporaryFolder.make("storechain-graph")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let outbox = try OutboxHandler(
                model: model, options: OutboxOptions(path: folder.appending(path: "outbox.sqlite").path))
            let network = GraphNetwork()
            let elsewhere = GraphElsewhere(store: store)
            try await body(
                GraphSetup(
                    name: "in-memory store behind a memory cache and an outbox", model: model,
                    makeChain: {
                        Chain(
                            handlers: [elsewhere.handler(), MemoryCache(model: model), outbox, network], terminal: store
                        )
                    },
                    backendNodes: { nodes(of: store) }, restarts: false, network: network,
                    pendingSaves: { outbox.pendingCount }, elsewhere: elsewhere))
        }
    }

    /// The demo backend's v2 API, or its v3 API (GitHub-style: pages with `Link` headers,
    /// `ids=` batches, per-parent lists), behind a memory cache and, with `disk`, a disk cache.
    /// v3 has no write routes: there the contexts only read, and only the other process changes
    /// the data.
    static func demo(v3: Bool = false, disk: Bool, feed: Bool = false) -> SetupMaker {
        { body in
            let model = try model()
            let folder = TemporaryFolder.make("storechain-graph")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appending(path: "cache.sqlite").path
            try await DemoBackendTests().withBackend(bands: 3) { backend, base in
                let elsewhere = GraphElsewhere(store: backend.store)
                try await body(
                    GraphSetup(
                        name: "demo \(v3 ? "v3" : "v2") API with "
                            + (disk ? "memory and disk caches" : "a memory cache") + (v3 ? ", read only" : "")
                            + (feed ? ", following its change feed from a cursor file" : ""),
                        model: model,
                        makeChain: {
                            let options = v3 ? DemoRemoteOptions.v3(baseURL: base) : DemoRemoteOptions.v2(baseURL: base)
                            let remote = try RemoteResponder(model: model, options: options)
                            var handlers: [any StoreHandler] = [elsewhere.handler(), MemoryCache(model: model)]
                            if feed {
                                let cursor = folder.appending(path: "feed.cursor").path
                                let feed = ChangeFeedHandler(options: ChangeFeedOptions(cursorFile: cursor))
                                handlers.insert(
                                    contentsOf: [feed, GraphHeldCatchUp(below: feed)] as [any StoreHandler], at: 0)
                            }
                            if disk { handlers.append(DiskCache(model: model, path: path)) }
                            handlers.append(PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)))
                            return Chain(handlers: handlers, terminal: remote)
                        },
                        backendNodes: { nodes(of: backend.store) }, restarts: disk, elsewhere: elsewhere,
                        writes: !v3,
                        changeWhileStopped: feed ? { try backend.save(SaveChanges(updated: [$0])) } : nil))
            }
        }
    }

    static let setups = [
        "in-memory", "in-memory+memory-cache", "in-memory+memory-cache, windows only",
        "in-memory+memory-cache+outbox", "v2+memory-cache",
        "v2+memory+disk-cache", "v2+memory+disk-cache+change-feed", "v3+memory+disk-cache, read only",
    ]

    static func setup(named name: String) -> SetupMaker? {
        switch name {
        case "in-memory": inMemory(caches: false)
        case "in-memory+memory-cache": inMemory(caches: true)
        case "in-memory+memory-cache, windows only": inMemory(caches: true, wholeFetches: false)
        case "in-memory+memory-cache+outbox": inMemoryWithOutbox()
        case "v2+memory-cache": demo(disk: false)
        case "v2+memory+disk-cache": demo(disk: true)
        case "v2+memory+disk-cache+change-feed": demo(disk: true, feed: true)
        case "v3+memory+disk-cache, read only": demo(v3: true, disk: true)
        default: nil
        }
    }

    /// `STORECHAIN_GRAPH_SETUP` runs only the setups whose names contain it (a long run of one).
    static let chosen = environment["STORECHAIN_GRAPH_SETUP"]

    @Test(arguments: setups)
    func randomOperationsAgreeWithTheReference(_ name: String) async throws {
        if let chosen = Self.chosen, !name.contains(chosen) { return }
        let maker = try #require(Self.setup(named: name))
        for seed in Self.seeds {
            print("object graph: \(name) seed \(seed) (replay with STORECHAIN_GRAPH_SEED=\(seed))")
            var random = SplitMix64(seed: seed)
            let operations = (0..<Self.operations).map { _ in
                GraphOperation.random(&random, contexts: Self.contexts, observes: Self.observes)
            }
            let offline = OfflineReads()
            guard let failure = try await Self.failure(of: operations, maker, offline: offline) else {
                let reads = offline.counts.withLock { $0 }
                let answered =
                    reads.answered + reads.failed == 0
                    ? ""
                    : ", with the backend down \(reads.answered) of \(reads.answered + reads.failed) reads asked before answered"
                print(
                    "reliability: object graph \(name) seed \(seed): \(operations.count) steps, no mismatch\(answered)")
                continue
            }
            let (shortest, log, mismatch) = try await Self.shorten(operations, failure: failure, maker)
            Issue.record(
                """
                object graph (\(name), seed \(seed)): \(mismatch)
                shortest failing sequence (\(shortest.count) of \(operations.count) steps):
                \(log.joined(separator: "\n"))
                """)
            return
        }
    }

    /// The first mismatch of running `operations` on a new setup, with the run's log.
    static func failure(of operations: [GraphOperation], _ maker: SetupMaker, offline: OfflineReads? = nil)
        async throws -> (GraphMismatch, [String])?
    {
        var result: (GraphMismatch, [String])?
        try await maker { setup in
            let run = try GraphRun(setup: setup, contexts: contexts)
            do {
                try await run.run(operations)
            } catch let mismatch as GraphMismatch {
                result = (mismatch, run.log)
            }
            offline?.counts.withLock { $0 = run.offlineReads }
            await run.finish()
        }
        return result
    }

    /// How many reads a run made with the backend down, and how many of them were answered.
    final class OfflineReads: Sendable {
        let counts = Locked((answered: 0, failed: 0))
    }

    /// Removes steps while the run still fails (halves, then smaller pieces), for at most 120
    /// runs or two minutes.
    static func shorten(
        _ operations: [GraphOperation], failure first: (GraphMismatch, [String]), _ maker: SetupMaker
    ) async throws -> ([GraphOperation], [String], GraphMismatch) {
        var current = Array(operations.prefix(first.0.step + 1))
        var best = first
        var runs = 0
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(120))
        func mayGoOn() -> Bool { runs < 120 && clock.now < deadline }
        var chunk = max(1, current.count / 2)
        while mayGoOn() {
            var removedAny = false
            var start = 0
            while start < current.count, mayGoOn() {
                var candidate = current
                candidate.removeSubrange(start..<min(current.count, start + chunk))
                runs += 1
                if let found = try await failure(of: candidate, maker) {
                    current = Array(candidate.prefix(found.0.step + 1))
                    best = found
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny {
                if chunk == 1 { break }
                chunk = max(1, chunk / 2)
            }
        }
        return (current, best.1, best.0)
    }
}
