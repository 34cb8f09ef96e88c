import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// What the remote adapter does for caches above it: refuse cache-only requests, read a
/// document once per request, and report the collections it read whole.
@Suite struct RemoteCachingSupportTests {
    let model = try! RemoteFixtures.model()

    /// A v1-style backend: one document holds every band and album.
    private func dumpOnly(_ transport: StubTransport) throws -> RemoteResponder {
        let options = RemoteOptions(
            baseURL: RemoteFixtures.base,
            entities: [
                "Band": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /dump", records: "bands")]),
                "Album": RemoteEntityOptions(
                    relationships: ["band": .foreignKey("band")],
                    fetch: [RemoteEndpoint("GET /dump", records: "albums")]),
            ])
        return try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
    }

    private let dump = StubTransport { _ in
        .json(
            #"""
            {"bands": [{"id": 1, "name": "Low"}, {"id": 2, "name": "Lower Dens"}],
             "albums": [{"id": 10, "title": "Things We Lost", "year": 2001, "band": 1},
                        {"id": 20, "title": "Nootropics", "year": 2012, "band": 2}]}
            """#)
    }

    @Test func cacheOnlyRequestsNeverReachTheNetwork() async throws {
        let remote = try dumpOnly(dump)
        for request: StoreRequest in [
            .fetch(FetchRequest(entity: "Band")), .objectFault(ObjectID(entity: "Band", key: 1)),
        ] {
            let error = await #expect(throws: StoreChainError.self) {
                try await remote.respondInAChain(to: request, context: RequestContext(cachePolicy: .cacheOnly))
            }
            #expect(error?.code == .notCached)
        }
        #expect(dump.requests.isEmpty)
    }

    @Test func aDocumentIsReadOncePerRequest() async throws {
        let remote = try dumpOnly(dump)
        let albums = try await remote.respondInAChain(
            to: .fetch(TestData.fetch("Album", where: "band.name == 'Lower Dens'")), context: RequestContext())
        #expect(
            try albums.fetchResult()
                == .objects([
                    Node(
                        id: ObjectID(entity: "Album", key: 20),
                        attributes: ["id": 20, "title": "Nootropics", "year": 2012],
                        relationships: ["band": .toOne(ObjectID(entity: "Band", key: 2))])
                ]))
        #expect(dump.requests.count == 1, "the bands came from the same document")
    }

    @Test func reportsTheCollectionsItReadWhole() async throws {
        let remote = try dumpOnly(dump)
        let response = try await remote.respondInAChain(
            to: .fetch(TestData.fetch("Album", where: "year > 2010")), context: RequestContext())
        #expect(response.info.completeCollections == ["Band", "Album"])
        #expect(
            Set(response.related.map(\.id)) == [
                ObjectID(entity: "Band", key: 1), ObjectID(entity: "Band", key: 2), ObjectID(entity: "Album", key: 10),
            ])
        #expect(dump.requests.count == 1)
    }

    @Test func aFilteredListingIsNotACompleteCollection() async throws {
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        let remote = try RemoteResponder(
            model: model, options: RemoteFixtures.options(), transport: transport, environment: [:])
        let context = RequestContext()
        let searched = try await remote.respondInAChain(
            to: .fetch(TestData.fetch("Band", where: "name BEGINSWITH 'Lo'")), context: context)
        #expect(searched.info.completeCollections.isEmpty)
        let listed = try await remote.respondInAChain(
            to: .fetch(TestData.fetch("Band", where: "rating > 4")), context: context)
        #expect(listed.info.completeCollections == ["Band"])
    }
}

/// Regression: a full page whose predecessor had a `Link` but which has none itself was read
/// again and again until maxPages (found by the warm-fetch benchmark: 200 bands, 100 a page).
@Suite struct PageNumberPagingTests {
    @Test func aFullLastPageWithoutALinkEndsWithTheNextEmptyPage() async throws {
        let model = try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
        let transport = StubTransport { request in
            let page = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?
                .first { $0.name == "page" }?.value
            switch page {
            case "1":
                return .json(
                    #"{"data": [{"id": 1, "name": "A"}, {"id": 2, "name": "B"}]}"#,
                    headers: ["Link": #"</v2/bands?page=2&per_page=2>; rel="next""#])
            case "2": return .json(#"{"data": [{"id": 3, "name": "C"}, {"id": 4, "name": "D"}]}"#)
            default: return .json(#"{"data": []}"#)
            }
        }
        let remote = try pagedBands(model, pageSize: 2, transport)
        let result = try await remote.respondInAChain(
            to: .fetch(FetchRequest(entity: "Band")), context: RequestContext())
        guard case .objects(let bands) = try result.fetchResult() else {
            throw StoreChainError(.invalidResponse, "no objects")
        }
        #expect(bands.map(\.id.key) == [1, 2, 3, 4])
        #expect(
            transport.requests.map { $0.url.query ?? "" } == [
                "page=1&per_page=2", "page=2&per_page=2", "page=3&per_page=2",
            ])
    }
}

@Suite struct PerCallRetryTests {
    /// Every page is a chain request of its own, whether a pagination handler walks the pages or
    /// the adapter does (it sends each page from the top of the chain): the retry handler retries
    /// the failed page alone.
    @Test(arguments: [true, false]) func eachPageIsRetriedOnItsOwn(behindAPager: Bool) async throws {
        let model = try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
        let failedOnce = Locked(false)
        let transport = StubTransport { request in
            let query = request.url.query ?? ""
            if query.hasPrefix("page=2&"),
                failedOnce.withLock({ failed in
                    defer { failed = true }
                    return !failed
                })
            {
                return .status(503)
            }
            if query.hasPrefix("page=1&") { return .json(#"{"data": [{"id": 1, "name": "A"}]}"#) }
            if query.hasPrefix("page=2&") { return .json(#"{"data": [{"id": 2, "name": "B"}]}"#) }
            return .json(#"{"data": []}"#)
        }
        let remote = try pagedBands(model, pageSize: 1, transport)
        let pager: [any StoreHandler] =
            behindAPager ? [PaginationHandler(model: model, options: .init(pageSize: 1, concurrency: 1))] : []
        let chain = Chain(
            handlers: pager + [RetryHandler(options: RetryOptions(baseDelay: .zero), jitter: { $0 })], terminal: remote)
        let bands = try await chain.fetch(FetchRequest(entity: "Band"))
        guard case .objects(let nodes) = bands else { throw StoreChainError(.invalidResponse, "no objects") }
        #expect(nodes.count == 2)
        #expect(
            transport.requests.compactMap { $0.url.query?.split(separator: "&").first.map(String.init) }
                == ["page=1", "page=2", "page=2", "page=3"], "page 2 retried alone, page 1 not read again")
    }
}

/// Regression: revalidating a cached relationship sent its owner's ETag; the adapter, reading
/// the relationship through the owner, got 304 and reported the owner gone.
@Suite struct RelationshipRevalidationTests {
    @Test func aRelationshipIsNeverRevalidatedWithItsOwnersValidators() async throws {
        let model = try RemoteFixtures.model()
        let transport = StubTransport { request in
            if request.headers["If-None-Match"] != nil { return .status(304, headers: ["ETag": "\"a\""]) }
            return .json(
                #"{"id": 1, "attributes": {"name": "Low"}, "albums": [{"album_id": 10, "title": "T", "band_id": 1}]}"#,
                headers: ["ETag": "\"a\""])
        }
        let remote = try RemoteResponder(
            model: model, options: RemoteFixtures.options(), transport: transport, environment: [:])
        let clock = ManualClock()
        let chain = Chain(
            handlers: [MemoryCache(model: model, options: CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(60))))],
            terminal: remote, clock: clock)
        let band = ObjectID(entity: "Band", key: 1)
        let albums = RelationshipValue.toMany([ObjectID(entity: "Album", key: 10)])
        _ = try await chain.send(.objectFault(band))
        #expect(try await chain.send(.relationshipFault(band, relationship: "albums")).relationshipValue() == albums)
        await clock.advance(by: .seconds(61))
        let again = try await chain.send(.relationshipFault(band, relationship: "albums"))
        #expect(try again.relationshipValue() == albums)
    }
}

/// Bands listed by page number (`GET /bands?page=&per_page=`), for the paging tests.
private func pagedBands(_ model: ObjectModel, pageSize: Int, _ transport: StubTransport) throws -> RemoteResponder {
    let options = RemoteOptions(
        baseURL: RemoteFixtures.base,
        entities: [
            "Band": RemoteEntityOptions(
                records: "data",
                fetch: [
                    RemoteEndpoint(
                        "GET /bands?page={page}&per_page={per_page}",
                        paging: .pages(page: "page", perPage: "per_page", size: pageSize, first: 1))
                ])
        ])
    return try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
}
