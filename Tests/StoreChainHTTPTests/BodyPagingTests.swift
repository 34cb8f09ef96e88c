import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Paging facts where stock frameworks put them: a next link, a total or a more-pages flag in
/// the body, declared beside the paging style; and a listing that ends however the backend
/// answers past its last page. Against a stubbed Django REST Framework-style backend: `count`,
/// `next`, `previous` and `results`, a page size of its own, 404 for a page number past the end.
@Suite struct BodyPagingTests {
    static let base = URL(string: "https://api.example/api")!

    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
    }

    static func query(_ request: TransportRequest, _ name: String) -> Int? {
        URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?
            .value.flatMap { Int($0) }
    }

    /// Bands 1…`count` as Django REST Framework pages them: by page number at its own page size
    /// (`?page=`, 404 past the end), or by `?offset=&limit=` with the limit capped at `maxLimit`;
    /// `count` and a `next` link (JSON:API-style `links.next` with `jsonAPI`) in the body.
    static func backend(count: Int, pageSize: Int = 50, maxLimit: Int = 50, jsonAPI: Bool = false) -> StubTransport {
        StubTransport { request in
            let start: Int
            let size: Int
            let nextQuery: String
            if let offset = query(request, "offset") {
                start = offset
                size = min(query(request, "limit") ?? maxLimit, maxLimit)
                nextQuery = "offset=\(offset + size)&limit=\(size)"
            } else {
                let page = query(request, "page") ?? 1
                guard page >= 1, page == 1 || (page - 1) * pageSize < count else {
                    return .json(#"{"detail": "Invalid page."}"#, status: 404)
                }
                start = (page - 1) * pageSize
                size = pageSize
                nextQuery = "page=\(page + 1)"
            }
            let keys = start < count ? Array((start + 1)...min(count, start + size)) : []
            let results = keys.map { #"{"id": \#($0), "name": "Band \#($0)"}"# }.joined(separator: ", ")
            let more = start + size < count
            if jsonAPI {
                let next = more ? #""/api/bands/?\#(nextQuery)""# : "null"
                return .json(#"{"data": [\#(results)], "links": {"next": \#(next)}, "meta": {"count": \#(count)}}"#)
            }
            let next = more ? #""https://api.example/api/bands/?\#(nextQuery)""# : "null"
            return .json(#"{"count": \#(count), "next": \#(next), "previous": null, "results": [\#(results)]}"#)
        }
    }

    static func remote(_ endpoint: RemoteEndpoint, transport: StubTransport, records: String? = "results") throws
        -> RemoteResponder
    {
        let options = RemoteOptions(
            baseURL: base, entities: ["Band": RemoteEntityOptions(records: records, fetch: [endpoint])])
        return try RemoteResponder(model: try model(), options: options, transport: transport, environment: [:])
    }

    static let pages = RemoteEndpoint(
        "GET /bands/?page={page}", paging: .pages(page: "page", perPage: "page_size", size: 50, first: 1),
        keyOrdered: true)

    static func stated(_ endpoint: RemoteEndpoint, next: String = "next", total: String = "count") -> RemoteEndpoint {
        var endpoint = endpoint
        endpoint.pagingFacts = PagingFacts(next: .body(next), total: .body(total))
        return endpoint
    }

    static func keys(_ result: FetchResult) -> [Int] {
        guard case .objects(let nodes) = result else { return [] }
        return nodes.compactMap { if case .integer(let key)? = $0.id.key { key } else { nil } }
    }

    static func all(limit: Int? = nil, offset: Int = 0, count: Bool = false) throws -> FetchRequest {
        var request = FetchRequest(entity: "Band", sortDescriptors: [try FetchSortDescriptor(parsing: "id")])
        request.fetchLimit = limit
        request.fetchOffset = offset
        if count { request.resultType = .count }
        return request
    }

    @Test(arguments: [false, true])
    func aListingOfWholePagesEndsAtThe404PastItsLast(behindAPager: Bool) async throws {
        let transport = Self.backend(count: 100)
        let remote = try Self.remote(Self.pages, transport: transport)
        let handlers: [any StoreHandler] = behindAPager ? [PaginationHandler(model: try Self.model())] : []
        let chain = Chain(handlers: handlers, terminal: remote)
        #expect(Self.keys(try await chain.fetch(try Self.all())) == Array(1...100))
        #expect(try await chain.fetch(try Self.all(count: true)) == .count(100))
        // A window past the end is empty, not a 404.
        #expect(Self.keys(try await chain.fetch(try Self.all(limit: 5, offset: 150))) == [])
    }

    @Test func aCountIsTheTotalTheBodyStatesInOneRequest() async throws {
        let transport = Self.backend(count: 120)
        let remote = try Self.remote(Self.stated(Self.pages), transport: transport)
        let chain = Chain(handlers: [PaginationHandler(model: try Self.model())], terminal: remote)
        #expect(try await chain.fetch(try Self.all(count: true)) == .count(120))
        #expect(transport.requests.count == 1)
        // The whole listing, page by page, ends at the stated end: no page past it is asked for.
        #expect(Self.keys(try await chain.fetch(try Self.all())) == Array(1...120))
        #expect(transport.requests.count == 4)
    }

    @Test func aCountWhoseFirstPageIsTheWholeListingLeavesItCached() async throws {
        let transport = Self.backend(count: 40)
        let model = try Self.model()
        let chain = Chain(
            handlers: [MemoryCache(model: model), PaginationHandler(model: model)],
            terminal: try Self.remote(Self.stated(Self.pages), transport: transport))
        #expect(try await chain.fetch(try Self.all(count: true)) == .count(40))
        #expect(transport.requests.count == 1)
        // The page that said 40 held all 40: the listing, a window and a filter are answered
        // from the cache.
        #expect(Self.keys(try await chain.fetch(try Self.all())) == Array(1...40))
        #expect(Self.keys(try await chain.fetch(try Self.all(limit: 3, offset: 37))) == [38, 39, 40])
        var named = try Self.all()
        named.predicate = try FetchPredicate(#"name BEGINSWITH "Band 3""#)
        #expect(Self.keys(try await chain.fetch(named)) == [3] + Array(30...39))
        #expect(transport.requests.count == 1)
    }

    @Test(arguments: [false, true])
    func aBackendThatCapsTheLimitIsReadToTheEndItStates(behindAPager: Bool) async throws {
        // Asked for 100 a page, the backend sends 50: a short page is not the last.
        let endpoint = RemoteEndpoint(
            "GET /bands/?offset={offset}&limit={limit}", paging: .offset(offset: "offset", limit: "limit", size: 100),
            keyOrdered: true)
        let transport = Self.backend(count: 120)
        let handlers: [any StoreHandler] = behindAPager ? [PaginationHandler(model: try Self.model())] : []
        let stated = Chain(handlers: handlers, terminal: try Self.remote(Self.stated(endpoint), transport: transport))
        #expect(Self.keys(try await stated.fetch(try Self.all())) == Array(1...120))

        // Not stated, the short page is taken for the last only if the body does not say more.
        let guessed = Chain(
            handlers: handlers, terminal: try Self.remote(endpoint, transport: Self.backend(count: 120)))
        let error = await #expect(throws: StoreChainError.self) { try await guessed.fetch(try Self.all()) }
        #expect(error?.code == .incompleteData)
        #expect(
            error?.message.contains("sent a short page, taken for its last") == true, "\(String(describing: error))")
        #expect(error?.location?.path == "$.next")
        #expect(error?.suggestion?.contains("next: next") == true)
    }

    @Test(arguments: [false, true])
    func aNextLinkInTheBodyIsFollowed(behindAPager: Bool) async throws {
        var endpoint = RemoteEndpoint("GET /bands/", paging: .link, keyOrdered: true)
        endpoint.pagingFacts = PagingFacts(next: .body("links.next"), total: .body("meta.count"))
        let transport = Self.backend(count: 120, pageSize: 40, jsonAPI: true)
        let remote = try Self.remote(endpoint, transport: transport, records: "data")
        let handlers: [any StoreHandler] = behindAPager ? [PaginationHandler(model: try Self.model())] : []
        let chain = Chain(handlers: handlers, terminal: remote)
        #expect(Self.keys(try await chain.fetch(try Self.all())) == Array(1...120))
        #expect(transport.requests.map { $0.url.query ?? "" } == ["", "page=2", "page=3"])
    }

    @Test func aMoreFlagEndsTheListingWhereTheBackendSays() async throws {
        // Stripe-style: `has_more` beside the records, 30 a page whatever the limit asked.
        let transport = StubTransport { request in
            let offset = Self.query(request, "offset") ?? 0
            let keys = Array((offset + 1)..<max(offset + 1, min(76, offset + 31)))
            let data = keys.map { #"{"id": \#($0), "name": "Band \#($0)"}"# }.joined(separator: ", ")
            return .json(#"{"object": "list", "data": [\#(data)], "has_more": \#(offset + 30 < 75)}"#)
        }
        var endpoint = RemoteEndpoint(
            "GET /bands?offset={offset}&limit={limit}", paging: .offset(offset: "offset", limit: "limit", size: 100))
        endpoint.pagingFacts = PagingFacts(hasMore: .body("has_more"))
        let chain = Chain(handlers: [], terminal: try Self.remote(endpoint, transport: transport, records: "data"))
        #expect(Self.keys(try await chain.fetch(try Self.all())) == Array(1...75))
        #expect(transport.requests.count == 3)
    }

    @Test func aFactOfTheWrongKindIsALocatedError() async throws {
        let transport = StubTransport { _ in .json(#"{"count": "many", "next": null, "results": []}"#) }
        let chain = Chain(handlers: [], terminal: try Self.remote(Self.stated(Self.pages), transport: transport))
        let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(try Self.all()) }
        #expect(error?.code == .badRecord)
        #expect(
            error?.message == "the listing's total is string, not a count of records", "\(String(describing: error))")
        #expect(error?.location?.path == "$.count")
        #expect(error?.location?.file?.contains("/api/bands/") == true)
    }

    @Test func aTotalInContentRangeIsRead() async throws {
        // PostgREST: `Content-Range: 0-49/120`.
        let transport = StubTransport { request in
            let offset = Self.query(request, "offset") ?? 0
            let keys = Array((offset + 1)..<max(offset + 1, min(121, offset + 51)))
            let data = keys.map { #"{"id": \#($0), "name": "Band \#($0)"}"# }.joined(separator: ", ")
            return .json("[\(data)]", headers: ["Content-Range": "\(offset)-\(offset + keys.count - 1)/120"])
        }
        var endpoint = RemoteEndpoint(
            "GET /bands?offset={offset}&limit={limit}", paging: .offset(offset: "offset", limit: "limit", size: 50),
            keyOrdered: true)
        endpoint.pagingFacts = PagingFacts(total: .header("Content-Range"))
        let chain = Chain(
            handlers: [PaginationHandler(model: try Self.model())],
            terminal: try Self.remote(endpoint, transport: transport, records: nil))
        #expect(try await chain.fetch(try Self.all(count: true)) == .count(120))
        #expect(transport.requests.count == 1)
    }

    @Test func aRelationshipEndpointFollowsTheNextLinkItsBodyHolds() async throws {
        let model = try RelationshipPagingTests.model()
        let transport = StubTransport { request in
            let page = Self.query(request, "page") ?? 1
            let keys = Array(((page - 1) * 50 + 1)...min(57, page * 50))
            let next = page == 1 ? #""https://api.example/api/bands/1/albums/?page=2""# : "null"
            let results = keys.map { #"{"id": \#($0)}"# }.joined(separator: ", ")
            return .json(#"{"count": 57, "next": \#(next), "results": [\#(results)]}"#)
        }
        let facts = PagingFacts(next: .body("next"), total: .body("count"))
        let band = RemoteEntityOptions(
            relationships: ["albums": .endpoint("GET /bands/{id}/albums/", paging: facts)])
        let options = RemoteOptions(
            baseURL: Self.base, entities: ["Band": band, "Album": RemoteEntityOptions(records: "results")])
        let remote = try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
        let response = try await Chain(handlers: [], terminal: remote).send(
            .relationshipFault(ObjectID(entity: "Band", key: 1), relationship: "albums"))
        #expect(try response.relationshipValue().objectIDs.compactMap(\.key) == (1...57).map { .integer($0) })
        #expect(transport.requests.map(\.url.absoluteString).last == "https://api.example/api/bands/1/albums/?page=2")
    }
}
