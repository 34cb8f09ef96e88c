import Foundation
import InMemoryTracing
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Synchronization
import Testing
import Tracing

/// The span trees a chain records with a tracer: one span per chain request (sub-requests its
/// children), child spans for the work handlers do, and a client span per HTTP exchange whose
/// context the tracer injects into the request.
@Suite struct TracingTests {
    let tracer = InMemoryTracer()

    /// The finished spans as an indented outline, children in the order they started.
    func outline(_ spans: [FinishedInMemorySpan], under parent: String? = nil, depth: Int = 0) -> [String] {
        spans.filter { $0.parentSpanID == parent }.sorted { Self.number($0.spanID) < Self.number($1.spanID) }
            .flatMap { span in
                [String(repeating: "  ", count: depth) + span.operationName]
                    + outline(spans, under: span.spanID, depth: depth + 1)
            }
    }

    static func number(_ id: String) -> Int { Int(id.split(separator: "-").last ?? "") ?? 0 }

    func span(_ name: String, in spans: [FinishedInMemorySpan]) throws -> FinishedInMemorySpan {
        try #require(spans.first { $0.operationName == name })
    }

    @Test func aCachedFetchHasTheCacheReadAndOneClientSpanThenOnlyTheRead() async throws {
        let model = try RemoteFixtures.model()
        let transport = StubTransport { _ in
            .json(RemoteFixtures.bandsPage, headers: ["Cache-Control": "max-age=60"])
        }
        let remote = try RemoteResponder(
            model: model, options: RemoteFixtures.options(), transport: transport, environment: [:])
        let chain = Chain(
            handlers: [MemoryCache(model: model)], terminal: remote, tracing: ChainTracing(tracer: tracer))
        let request = try TestData.fetch("Band", where: "name BEGINSWITH[c] 'low' AND rating > 4")

        _ = try await chain.fetch(request)
        let first = tracer.popFinishedSpans()
        // With no pagination handler given, the chain's own pager at the seam (below the cache)
        // sends the page to the remote: the page under the fetch, the exchange under the page.
        #expect(
            outline(first) == [
                "storechain.fetch", "  storechain.cache.read", "  storechain.pagination.page", "    GET",
                "  storechain.cache.write",
            ])
        let fetch = try span("storechain.fetch", in: first)
        #expect(fetch.attributes["storechain.entity"]?.toSpanAttribute() == "Band")
        #expect(fetch.attributes["storechain.predicate"]?.toSpanAttribute() == "name BEGINSWITH[c] ? AND rating > ?")
        #expect(fetch.attributes["storechain.cache.status"]?.toSpanAttribute() == "miss")
        #expect(fetch.attributes["storechain.exchanges"]?.toSpanAttribute() == 1)
        #expect(fetch.attributes["storechain.answered_by"]?.toSpanAttribute() == "remote")
        let get = try span("GET", in: first)
        #expect(get.kind == .client)
        #expect(get.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(
            get.attributes["url.full"]?.toSpanAttribute() == "https://api.example/v2/bands/search?q=low")
        #expect(get.attributes["server.address"]?.toSpanAttribute() == "api.example")
        #expect(get.attributes["server.port"]?.toSpanAttribute() == 443)
        #expect(get.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        // The client span's context went out with the request, for the backend's spans to join.
        let sent = try #require(transport.requests.first)
        #expect(sent.headers[InMemoryTracer.spanIDKey] == get.spanID)
        #expect(sent.headers[InMemoryTracer.traceIDKey] == get.traceID)

        _ = try await chain.fetch(request)
        let second = tracer.popFinishedSpans()
        #expect(outline(second) == ["storechain.fetch", "  storechain.cache.read"])
        let hit = try span("storechain.fetch", in: second)
        #expect(hit.attributes["storechain.cache.status"]?.toSpanAttribute() == "hit")
        #expect(hit.attributes["storechain.exchanges"]?.toSpanAttribute() == 0)
        #expect(transport.requests.count == 1)
    }

    /// 25 bands, 10 a page; the second page fails once with 503.
    func flakyListing() throws -> (RemoteResponder, StubTransport) {
        let failures = Locked(0)
        let transport = StubTransport { request in
            let page = Int(RemotePagingTests.query(request, "page") ?? "") ?? 1
            if page == 2,
                failures.withLock({ count in
                    count += 1
                    return count == 1
                })
            {
                return .status(503)
            }
            let keys = Array(stride(from: (page - 1) * 10 + 1, through: min(25, page * 10), by: 1))
            return .json(#"{"data": [\#(keys.map(RemotePagingTests.record).joined(separator: ", "))]}"#)
        }
        let options = RemoteOptions(
            baseURL: RemoteFixtures.base,
            entities: [
                "Band": RemoteEntityOptions(
                    records: "data",
                    fetch: [
                        RemoteEndpoint(
                            "GET /bands?page={page}&per_page={per_page}",
                            paging: .pages(page: "page", perPage: "per_page", size: 10, first: 1), keyOrdered: true)
                    ])
            ])
        let remote = try RemoteResponder(
            model: try RemotePagingTests.model(), options: options, transport: transport, environment: [:])
        return (remote, transport)
    }

    @Test func aPagedFetchHasAPageSpanPerPageAndARetriedPageTwoAttempts() async throws {
        let (remote, transport) = try flakyListing()
        let chain = Chain(
            handlers: [
                PaginationHandler(model: try RemotePagingTests.model(), options: .init(concurrency: 1)),
                RetryHandler(options: RetryOptions(maxAttempts: 3), jitter: { _ in .zero }),
            ], terminal: remote, tracing: ChainTracing(tracer: tracer))
        let result = try await chain.fetch(FetchRequest(entity: "Band"))
        #expect(result.nodes.count == 25)
        #expect(transport.requests.count == 4)
        let spans = tracer.popFinishedSpans()
        #expect(
            outline(spans) == [
                "storechain.fetch",
                "  storechain.pagination.page", "    storechain.retry.attempt", "      GET",
                "  storechain.pagination.page", "    storechain.retry.attempt", "      GET",
                "    storechain.retry.attempt", "      GET",
                "  storechain.pagination.page", "    storechain.retry.attempt", "      GET",
            ])
        let fetch = try span("storechain.fetch", in: spans)
        #expect(fetch.attributes["storechain.pages"]?.toSpanAttribute() == 3)
        #expect(fetch.attributes["storechain.exchanges"]?.toSpanAttribute() == 3, "the failed exchange gave no page")
        let failed = spans.filter { $0.operationName == "GET" && $0.status?.code == .error }
        #expect(failed.count == 1)
        #expect(failed.first?.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(failed.first?.attributes["error.type"]?.toSpanAttribute() == "503")
        let attempts = spans.filter { $0.operationName == "storechain.retry.attempt" }
        #expect(attempts.compactMap { $0.attributes["storechain.attempt"]?.toSpanAttribute() } == [1, 1, 2, 1])
    }

    @Test func pagesTheChainsPagerSendsAreChildrenOfTheFetchTheyServe() async throws {
        let (remote, _) = try RemotePagingTests.remote(.pageNumber)
        let chain = Chain(handlers: [], terminal: remote, tracing: ChainTracing(tracer: tracer))
        _ = try await chain.fetch(FetchRequest(entity: "Band", fetchLimit: 15))
        let spans = tracer.popFinishedSpans()
        #expect(
            outline(spans) == [
                "storechain.fetch", "  storechain.pagination.page", "    GET", "  storechain.pagination.page",
                "    GET",
            ])
    }

    @Test func batchedFaultsMakeOneBatchSpanUnderTheAppsOwnSpan() async throws {
        let clock = ManualClock()
        let (remote, transport) = try RemotePagingTests.remote(.pageNumber)
        let model = try RemotePagingTests.model()
        let chain = Chain(
            handlers: [BatchingHandler(model: model, options: BatchingOptions(entities: ["Band"]))], terminal: remote,
            clock: clock, tracing: ChainTracing(tracer: tracer))
        let ids = (1...3).map { ObjectID(entity: "Band", key: .integer($0)) }
        try await tracer.withSpan("app.screen") { _ in
            async let first = chain.send(.objectFault(ids[0]))
            async let second = chain.send(.objectFault(ids[1]))
            async let third = chain.send(.objectFault(ids[2]))
            try await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(5))
            let answers = try await [first, second, third]
            #expect(try answers.map { try $0.objectNode()?.id } == ids)
        }
        await chain.shutdown()
        let spans = tracer.popFinishedSpans()
        let app = try span("app.screen", in: spans)
        #expect(Set(spans.map(\.traceID)) == [app.traceID], "one trace, started by the app")
        let faults = spans.filter { $0.operationName == "storechain.object-fault" }
        #expect(faults.count == 3)
        #expect(faults.allSatisfy { $0.parentSpanID == app.spanID })
        let batch = try span("storechain.batch", in: spans)
        #expect(spans.filter { $0.operationName == "storechain.batch" }.count == 1)
        #expect(batch.attributes["storechain.batch.size"]?.toSpanAttribute() == 3)
        #expect(faults.contains { $0.spanID == batch.parentSpanID })
        let exchanges = spans.filter { $0.operationName == "GET" }
        #expect(exchanges.count == transport.requests.count)
        // Every exchange is under the batch span.
        let byID = Dictionary(uniqueKeysWithValues: spans.map { ($0.spanID, $0) })
        for exchange in exchanges {
            var ancestor = exchange.parentSpanID
            while let id = ancestor, id != batch.spanID { ancestor = byID[id]?.parentSpanID }
            #expect(ancestor == batch.spanID)
        }
    }

    @Test func aSelectionTracesOnlyTheRequestsItChoosesWithAllTheySendAndSummarizesTheRest() async throws {
        let (remote, _) = try RemotePagingTests.remote(.pageNumber)
        let selection = LimitedSelection()
        let chain = Chain(
            handlers: [], terminal: remote, tracing: ChainTracing(tracer: tracer, selection: selection))
        _ = try await chain.fetch(FetchRequest(entity: "Band", fetchLimit: 15))
        #expect(tracer.popFinishedSpans().isEmpty, "a request the selection leaves out costs no span")
        let summary = try #require(selection.summaries.withLock { $0.first })
        #expect(selection.summaries.withLock { $0.count } == 1, "one summary for the fetch, none for its pages")
        #expect(summary.request.kind == .fetch)
        #expect(summary.answeredBy == "remote")
        #expect(summary.exchanges == 2)
        #expect(summary.end >= summary.start && !summary.failed)

        selection.traces.withLock { $0 = true }
        _ = try await chain.fetch(FetchRequest(entity: "Band", fetchLimit: 15))
        #expect(
            outline(tracer.popFinishedSpans()) == [
                "storechain.fetch", "  storechain.pagination.page", "    GET", "  storechain.pagination.page",
                "    GET",
            ], "a request the selection chooses is traced with its pages and exchanges")
        #expect(selection.summaries.withLock { $0.count } == 1)
    }

    @Test func predicateValuesAreShownWhenNotRedacted() async throws {
        let (remote, _) = try RemotePagingTests.remote(.pageNumber)
        let chain = Chain(
            handlers: [], terminal: remote, tracing: ChainTracing(tracer: tracer, redactsValues: false))
        _ = try await chain.fetch(TestData.fetch("Band", where: "name == 'Band 03'"))
        let fetch = try span("storechain.fetch", in: tracer.popFinishedSpans())
        #expect(fetch.attributes["storechain.predicate"]?.toSpanAttribute() == #"name == "Band 03""#)
    }

    @Test func aChainWithoutTracingRecordsNothing() async throws {
        let (remote, transport) = try RemotePagingTests.remote(.pageNumber)
        let chain = Chain(handlers: [], terminal: remote, tracing: nil)
        _ = try await chain.fetch(FetchRequest(entity: "Band", fetchLimit: 5))
        #expect(tracer.finishedSpans.isEmpty)
        #expect(transport.requests.allSatisfy { $0.headers[InMemoryTracer.spanIDKey] == nil })
    }
}

/// A selection that traces every request or none, keeping the summaries of the others.
private final class LimitedSelection: TraceSelection {
    let traces = Mutex(false)
    let summaries = Mutex<[RequestSummary]>([])
    func tracesInFull(_ request: StoreRequest) -> Bool { traces.withLock { $0 } }
    func finished(_ summary: consuming RequestSummary) {
        let finished = summary
        summaries.withLock { $0.append(finished) }
    }
}
