import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

@testable import StoreChainInspector

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The inspector's API without a browser (the page itself is tested in Chromium by
/// Tests/Browser/inspector_test.py): a query answered with the chain's spans, the same query
/// warm, located errors, secrets kept off the page, and actions refused without the token.
@Suite struct InspectorTests {
    private static func inspector() throws -> (Inspector, RecordingResponder) {
        let store = try MusicFixture.store()
        let backend = RecordingResponder(name: "backend") { request, context in
            try await store.respond(to: request, context: context)
        }
        let recorder = InspectorRecorder()
        let chain = Chain(
            handlers: [MemoryCache(model: store.model)], terminal: backend,
            tracing: recorder.tracing)
        return (Inspector(chain: chain, recorder: recorder), backend)
    }

    @Test func aQueryIsAnsweredWithWhatTheChainDid() async throws {
        let (inspector, backend) = try Self.inspector()
        let input = Inspector.QueryInput(entity: "Album", predicate: "year >= 2000", sort: "-year", limit: 2)
        let cold = await inspector.run(input)
        #expect(cold.error == nil, "\(cold.error ?? "")")
        #expect(
            cold.columns.first == "id" && cold.columns.contains("title")
                && cold.columns.filter { $0 == "id" }.count == 1)
        #expect(cold.rows.map(\.first) == ["11", "10"], "the two latest albums from 2000 on: \(cold.rows)")
        #expect(cold.cacheStatus == "miss")
        let fetch = try #require(cold.spans.first { $0.name == "storechain.fetch" }, "\(cold.spans.map(\.name))")
        #expect(fetch.attributes["storechain.cache.status"] == "miss")
        #expect(
            cold.spans.first { $0.name == "inspector.query" }?.id == fetch.parent,
            "the chain's request is the query's child")
        #expect(backend.count(.fetch) == 1)

        let warm = await inspector.run(input)
        #expect(warm.cacheStatus == "hit" && warm.rows == cold.rows)
        #expect(backend.count(.fetch) == 1, "answered by the memory cache")
        #expect(!warm.spans.contains { $0.trace == fetch.trace }, "each query is a trace of its own")

        let recent = inspector.recentRequests()
        #expect(recent.count == 2 && recent.first?.spans == warm.spans, "newest first, with its spans")
        #expect(recent.map(\.cacheStatus) == ["hit", "miss"] && recent.last?.exchanges == 0)
        #expect(recent.first?.subject == "Album where year >= ?", "values redacted as in spans")
    }

    @Test func requestsTheAppMakesAreSummarizedWithoutASpan() async throws {
        let (inspector, backend) = try Self.inspector()
        let band = StoreRequest.objectFault(ObjectID(entity: "Band", key: 1))
        _ = try await inspector.chain.send(band)
        _ = try await inspector.chain.send(band)
        #expect(inspector.recorder.tracer.finishedSpans.isEmpty, "no span for a request the console did not run")
        let recent = inspector.recentRequests()
        #expect(recent.map(\.kind) == ["object-fault", "object-fault"] && recent.allSatisfy { $0.spans == nil })
        #expect(recent.map(\.cacheStatus) == ["hit", "miss"])
        #expect(recent.map(\.answeredBy) == ["memory-cache", "in-memory"])
        #expect(recent.first?.subject == "Band/1")
        #expect(recent.allSatisfy { $0.end >= $0.start && $0.start > 0 })
        #expect(backend.count(.objectFault) == 1)
    }

    @Test func theRecorderKeepsTheLastRequestsAndCountsThemAll() async throws {
        let store = try MusicFixture.store()
        let recorder = InspectorRecorder(capacity: 3)
        let chain = Chain(terminal: store, tracing: recorder.tracing) {}
        for key in 1...5 { _ = try await chain.send(.objectFault(ObjectID(entity: "Band", key: .integer(key)))) }
        #expect(recorder.recentRequests(10).map(\.number) == [4, 3, 2])
        let (following, seen) = recorder.requests(after: 3)
        #expect(following.map(\.number) == [3, 4] && seen == 5)
        #expect(recorder.requests(after: 0).requests.map(\.number) == [2, 3, 4], "the forgotten ones are gone")
        #expect(recorder.requests(after: .max).requests.isEmpty)
    }

    @Test func forgettingAnEntityEmptiesItFromTheCacheAndNothingElse() async throws {
        let (inspector, backend) = try Self.inspector()
        _ = await inspector.run(Inspector.QueryInput(entity: "Album"))
        _ = await inspector.run(Inspector.QueryInput(entity: "Band"))
        let before = try #require(await inspector.cachesView().first)
        #expect((before.objectsByEntity["Album"] ?? 0) > 0 && before.collections.contains("Album"))

        let answer = await inspector.forget(Inspector.ForgetInput(cache: "memory-cache", entity: "Album"))
        #expect(answer.error == nil && answer.forgotten == ["memory-cache": before.objectsByEntity["Album"] ?? -1])
        let after = try #require(await inspector.cachesView().first)
        #expect(after.objectsByEntity["Album"] == nil && !after.collections.contains("Album"))
        #expect(after.objectsByEntity["Band"] == before.objectsByEntity["Band"], "other entities stay")
        let fetches = backend.count(.fetch)
        #expect(await inspector.run(Inspector.QueryInput(entity: "Album")).cacheStatus == "miss")
        #expect(await inspector.run(Inspector.QueryInput(entity: "Band")).cacheStatus == "hit")
        #expect(backend.count(.fetch) == fetches + 1)

        let unknown = await inspector.forget(Inspector.ForgetInput(cache: "disk", entity: "Album"))
        #expect(unknown.error == "no cache named 'disk'; the chain's caches: memory-cache")
    }

    @Test func aSaveHeldInTheOutboxIsRetriedOrDiscardedFromThePage() async throws {
        let store = try MusicFixture.store()
        let down = Locked(true)
        let backend = RecordingResponder(name: "backend") { request, context in
            if request.kind == .save, down.withLock({ $0 }) {
                throw StoreChainError(.backendUnavailable, "the backend is down")
            }
            return try await store.respond(to: request, context: context)
        }
        let path = FileManager.default.temporaryDirectory.appending(path: "inspector-outbox-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outbox = try OutboxHandler(
            model: store.model, options: OutboxOptions(path: path, retryDelay: .seconds(3600)))
        let recorder = InspectorRecorder()
        let inspector = Inspector(
            chain: Chain(handlers: [outbox], terminal: backend, clock: ManualClock(), tracing: recorder.tracing),
            recorder: recorder)
        for name in ["Kept", "Dropped"] {
            let save = SaveChanges(updated: [
                Node(id: ObjectID(entity: "Band", key: 1), attributes: ["name": .string(name)])
            ])
            #expect(try await inspector.chain.send(.save(save)).saveResult().isPending)
        }
        let held = try #require(await inspector.outboxesView().first)
        #expect(held.name == outbox.name && held.entries.map(\.state) == ["pending", "pending"])
        let changes = held.entries.first?.changes ?? []
        #expect(changes.count == 1 && changes[0].hasPrefix("update Band/1 name: ") && changes[0].contains("Kept"))
        #expect(held.entries.first?.lastError?.contains("down") == true, "\(held.entries)")
        let (kept, dropped) = (held.entries[0].id, held.entries[1].id)

        let discarded = await inspector.discardOutboxEntry(Inspector.OutboxInput(id: dropped))
        #expect(discarded.error == nil && discarded.done == "save \(dropped) was discarded")
        let stillDown = await inspector.retryOutboxEntry(Inspector.OutboxInput(id: kept))
        #expect(stillDown.done?.contains("still pending") == true && stillDown.pending == 1)
        down.withLock { $0 = false }
        let sent = await inspector.retryOutboxEntry(Inspector.OutboxInput(id: kept))
        #expect(sent.done == "save \(kept) was sent" && sent.pending == 0)
        #expect(await inspector.outboxesView().first?.entries.isEmpty == true)
        #expect(
            store.node(for: ObjectID(entity: "Band", key: 1))?[attribute: "name"] == "Kept",
            "the discarded save was never sent")

        let missing = await inspector.retryOutboxEntry(Inspector.OutboxInput(outbox: "elsewhere", id: kept))
        #expect(missing.error == "name one of the chain's outboxes in 'outbox': \(outbox.name)")
    }

    @Test func theRateLimitersStateIsShown() async throws {
        let store = try MusicFixture.store()
        let recorder = InspectorRecorder()
        let inspector = Inspector(
            chain: Chain(
                handlers: [RateLimitHandler(options: RateLimitOptions(rate: 1, burst: 2))], terminal: store,
                clock: ManualClock(), tracing: recorder.tracing),
            recorder: recorder)
        let idle = try #require(inspector.rateLimitsView().first)
        #expect(idle.name == "rate-limit" && idle.available == 2 && idle.nextStartIn == 0 && idle.inFlight == 0)
        for key in 1...2 {
            _ = try await inspector.chain.send(.objectFault(ObjectID(entity: "Band", key: .integer(key))))
        }
        let used = try #require(inspector.rateLimitsView().first)
        #expect(used.available == 0 && used.nextStartIn == 1_000, "a burst of two spent at one a second: \(used)")
        #expect(used.rate == 1 && used.burst == 2 && used.pausedFor == nil)
    }

    @Test func thePipelineShowsEachHandlersScope() throws {
        let store = try MusicFixture.store()
        let recorder = InspectorRecorder()
        let inspector = Inspector(
            chain: Chain(
                handlers: [
                    MemoryCache(model: store.model),
                    BatchingHandler(model: store.model, options: BatchingOptions(entities: ["Band"]))
                        .when(kinds: [.objectFault], entities: ["Band", "Album"]),
                ], terminal: store, tracing: recorder.tracing),
            recorder: recorder)
        let stages = inspector.pipelineView().stages
        try #require(stages.count == 2)
        #expect(stages[1].name == "batching")
        #expect(stages[0].kinds == nil && stages[0].entities == nil, "an unscoped handler takes every request")
        #expect(stages[1].kinds == ["object-fault"] && stages[1].entities == ["Album", "Band"])
    }

    @Test func aBadQuerySaysWhatIsWrongAndWhere() async throws {
        let (inspector, backend) = try Self.inspector()
        let bad = await inspector.run(Inspector.QueryInput(entity: "Album", predicate: "year >>= 2000"))
        #expect(bad.error != nil && bad.rows.isEmpty, "\(bad)")
        let policy = await inspector.run(Inspector.QueryInput(entity: "Album", policy: "sometimes"))
        #expect(policy.error == "unknown cache policy 'sometimes'" && policy.suggestion?.contains("reload") == true)
        #expect(backend.requests.isEmpty, "nothing was sent")
    }

    @Test func secretsInThePipelineAreNotShown() {
        #expect(Inspector.redacted("    bearer-token: s3cr3t") == "    bearer-token: •••")
        #expect(Inspector.redacted("    headers: { Authorization: Basic abc }") == "    headers: •••")
        #expect(Inspector.redacted("    base-url: http://127.0.0.1/v2") == "    base-url: http://127.0.0.1/v2")
        let lines = ["handlers:", "  - memory-cache: { ttl: 5m }", "  - retry: {}", "terminal:", "  remote:"]
        #expect(Inspector.excerpt(of: lines, from: 2, until: 3) == "  - memory-cache: { ttl: 5m }")
        #expect(Inspector.excerpt(of: lines, from: 3, until: nil) == "  - retry: {}", "a top-level key ends it")
    }

    @Test func actionsNeedTheRunsToken() async throws {
        let (inspector, backend) = try Self.inspector()
        let port = try await inspector.serve(port: 0)
        defer { Task { await inspector.stop() } }
        let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
        var request = URLRequest(url: base.appending(path: "api/query"))
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"entity": "Album"}"#.utf8)
        let (refused, answer) = try await URLSession.shared.data(for: request)
        #expect((answer as? HTTPURLResponse)?.statusCode == 403)
        #expect(String(decoding: refused, as: UTF8.self).contains("X-StoreChain-Token"))
        #expect(backend.requests.isEmpty)

        let (session, _) = try await URLSession.shared.data(from: base.appending(path: "api/session"))
        request.setValue(
            try JSONDecoder().decode(Inspector.Session.self, from: session).token,
            forHTTPHeaderField: "X-StoreChain-Token")
        let (accepted, ok) = try await URLSession.shared.data(for: request)
        #expect((ok as? HTTPURLResponse)?.statusCode == 200)
        #expect(try JSONDecoder().decode(Inspector.QueryAnswer.self, from: accepted).rows.count == 6)
        let (page, _) = try await URLSession.shared.data(from: base)
        #expect(String(decoding: page, as: UTF8.self).contains("StoreChain inspector"), "the page ships as a resource")
    }
}
