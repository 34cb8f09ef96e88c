import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// What a cache above a pager learns from a paged listing: having read every page of a listing
/// the backend did not filter, it holds the entity's whole collection and answers any later
/// fetch of it locally; objects it holds answer fetches by key.
@Suite struct RemoteCollectionCachingTests {
    /// A memory cache above a pager above the 57-band page-numbered backend of
    /// `RemotePagingTests` (10 a page).
    static func chain(_ style: PageInfo.Style = .pageNumber) throws -> (Chain, StubTransport) {
        let (remote, transport) = try RemotePagingTests.remote(style)
        let model = try RemotePagingTests.model()
        let chain = Chain(terminal: remote) {
            MemoryCache(model: model)
            PaginationHandler(model: model)
        }
        return (chain, transport)
    }

    /// Page numbers with a total read exactly the pages there are; offsets without one read
    /// waves of four pages, the last reaching past the end.
    @Test(arguments: [PageInfo.Style.pageNumber, .offset])
    func everyPageOfAnUnfilteredListingMakesACompleteCollection(style: PageInfo.Style) async throws {
        let (chain, transport) = try Self.chain(style)
        let first = FetchRequest(entity: "Band", predicate: try FetchPredicate("name ENDSWITH '7'"))
        #expect(try await chain.fetch(first) == (try RemotePagingTests.expected(first)))
        let pages = transport.requests.count
        #expect(pages == (style == .pageNumber ? 6 : 9), "57 records, 10 a page")

        for (format, limit) in [("name ENDSWITH '3'", nil), ("id > 20", 5), ("name CONTAINS '1'", nil)]
            as [(String, Int?)]
        {
            for resultType in [FetchRequest.ResultType.objects, .count] {
                let request = FetchRequest(
                    entity: "Band", predicate: try FetchPredicate(format),
                    sortDescriptors: [try FetchSortDescriptor(parsing: "-name")], fetchLimit: limit,
                    resultType: resultType)
                #expect(try await chain.fetch(request) == (try RemotePagingTests.expected(request)), "\(request)")
            }
        }
        #expect(transport.requests.count == pages, "every later fetch is answered from the complete collection")
        await chain.shutdown()
    }

    @Test func aWindowOrAFilteredListingIsNotTheWholeCollection() async throws {
        let (chain, transport) = try Self.chain()
        _ = try await chain.fetch(FetchRequest(entity: "Band", fetchLimit: 10, fetchOffset: 20))
        let afterWindow = transport.requests.count
        let request = FetchRequest(entity: "Band", predicate: try FetchPredicate("name ENDSWITH '7'"))
        #expect(try await chain.fetch(request) == (try RemotePagingTests.expected(request)))
        #expect(transport.requests.count > afterWindow, "one window of pages is not every object")
        await chain.shutdown()
    }

    @Test func cachedObjectsAnswerAFetchByKey() async throws {
        // Faults read one object each from the get endpoint; fetches read the listing.
        let (listing, pages) = try RemotePagingTests.remote(.pageNumber)
        let transport = StubTransport { request in
            guard let key = Int(request.url.lastPathComponent) else { return try await pages.send(request) }
            return .json(RemotePagingTests.record(key))
        }
        var options = listing.options
        options.entities["Band"]?.get = "GET /bands/{id}"
        let model = try RemotePagingTests.model()
        let remote = try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
        let chain = Chain(terminal: remote) {
            MemoryCache(model: model)
            PaginationHandler(model: model)
        }
        for key in [3, 14] {
            _ = try await chain.send(.objectFault(ObjectID(entity: "Band", key: .integer(key))))
        }
        #expect(transport.requests.count == 2)
        let cached = FetchRequest(
            entity: "Band", predicate: try FetchPredicate("id IN {14, 3}"),
            sortDescriptors: [try FetchSortDescriptor(parsing: "-id")])
        #expect(try await chain.fetch(cached) == (try RemotePagingTests.expected(cached)))
        #expect(transport.requests.count == 2, "both objects are cached and fresh")

        let partly = FetchRequest(entity: "Band", predicate: try FetchPredicate("id IN {3, 15}"))
        #expect(try await chain.fetch(partly) == (try RemotePagingTests.expected(partly)))
        #expect(transport.requests.count > 2, "band 15 is not cached, so the backend is asked")
        await chain.shutdown()
    }

    @Test func aFewRelatedObjectsAreReadByKeyNotByReadingTheirWholeListing() async throws {
        let transport = StubTransport { request in
            switch request.url.path {
            case "/v2/albums":
                .json(
                    #"[{"id": 10, "title": "A", "band_id": 1}, {"id": 11, "title": "B", "band_id": 2}, "#
                        + #"{"id": 12, "title": "C", "band_id": 1}]"#)
            case "/v2/bands": .json("[" + (1...57).map(RemotePagingTests.record).joined(separator: ", ") + "]")
            default: .json(RemotePagingTests.record(Int(request.url.lastPathComponent) ?? 0))
            }
        }
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example/v2")!,
            entities: [
                "Band": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /bands")], get: "GET /bands/{id}"),
                "Album": RemoteEntityOptions(
                    relationships: ["band": .foreignKey("band_id")], fetch: [RemoteEndpoint("GET /albums")]),
            ])
        let model = try RemoteFixtures.model()
        let remote = try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
        let chain = Chain(terminal: remote) { MemoryCache(model: model) }
        let first = FetchRequest(entity: "Album", predicate: try FetchPredicate("band.name == 'Band 01'"))
        #expect(try await chain.fetch(first).objectKeys == [.integer(10), .integer(12)])
        #expect(transport.requests.map(\.url.path).sorted() == ["/v2/albums", "/v2/bands/1", "/v2/bands/2"])

        let second = FetchRequest(entity: "Album", predicate: try FetchPredicate("band.name == 'Band 02'"))
        #expect(try await chain.fetch(second).objectKeys == [.integer(11)])
        #expect(transport.requests.count == 4, "the albums again; both bands from the memory cache")
        await chain.shutdown()
    }
}

extension FetchResult {
    /// The keys of the objects, in order.
    fileprivate var objectKeys: [Value?] {
        if case .objects(let nodes) = self { nodes.map(\.id.key) } else { [] }
    }
}
