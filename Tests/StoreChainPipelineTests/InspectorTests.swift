import Foundation
import StoreChain
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
            tracing: ChainTracing(tracer: recorder.tracer))
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
        #expect(recent.count == 2 && recent.first?.first?.trace == warm.spans.first?.trace, "newest first")
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
