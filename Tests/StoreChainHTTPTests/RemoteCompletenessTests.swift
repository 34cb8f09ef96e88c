import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A response that announces more pages is never the whole answer: to-many lists behind their
/// own endpoint and listings declared without paging follow `Link: rel="next"` to the end, and
/// every answer is checked again in memory against the whole request.
@Suite struct RemoteCompletenessTests {
    static let base = URL(string: "https://api.example/v2")!

    /// Band 1 has 57 albums, band 2 has 3; albums are numbered in key order.
    static let albumsOfBand: [Int: [Int]] = [1: Array(1...57), 2: [58, 59, 60]]

    static func album(_ key: Int) -> String {
        let band = albumsOfBand.first { $0.value.contains(key) }?.key ?? 0
        return #"{"id": \#(key), "title": "Album \#(key)", "band_id": \#(band)}"#
    }

    static func query(_ request: TransportRequest, _ name: String) -> String? {
        URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    /// `keys` 30 a page, with a `Link` to the next page of `path` while there is one.
    static func linkedPage(_ keys: [Int], path: String, request: TransportRequest) -> TransportResponse {
        let page = Int(query(request, "page") ?? "") ?? 1
        let slice = keys.dropFirst((page - 1) * 30).prefix(30)
        let link = keys.count > page * 30 ? ["Link": #"<\#(path)?page=\#(page + 1)>; rel="next""#] : [:]
        return .json("[" + slice.map(album).joined(separator: ", ") + "]", headers: link)
    }

    /// True for the first request for page `page` (the first page counts as "1"), false after.
    static func failsOnce(page: String?) -> @Sendable (TransportRequest) -> Bool {
        let failed = Locked(false)
        return { request in
            guard let page, (query(request, "page") ?? "1") == page else { return false }
            return failed.withLock { failed in
                defer { failed = true }
                return !failed
            }
        }
    }

    static func expected(_ request: FetchRequest) throws -> FetchResult {
        var nodes = [1, 2].map { key in
            Node(
                id: ObjectID(entity: "Band", key: .integer(key)),
                attributes: ["id": .integer(key), "name": .string("Band \(key)")],
                relationships: [
                    "albums": .toMany((albumsOfBand[key] ?? []).map { ObjectID(entity: "Album", key: .integer($0)) })
                ])
        }
        for (band, albums) in albumsOfBand {
            for key in albums {
                nodes.append(
                    Node(
                        id: ObjectID(entity: "Album", key: .integer(key)),
                        attributes: ["id": .integer(key), "title": .string("Album \(key)")],
                        relationships: ["band": .toOne(ObjectID(entity: "Band", key: .integer(band)))]))
            }
        }
        return try InMemoryStore(model: try RemoteFixtures.model(), nodes: nodes).fetch(request)
    }

    /// A remote adapter whose bands' albums are read from `GET /bands/{id}/albums`, 30 a page.
    /// With `failingOnce`, the first request for that page number answers 503.
    static func albumsBehindTheirOwnEndpoint(failingOnce failingPage: String? = nil) throws -> (
        RemoteResponder, StubTransport
    ) {
        let fails = failsOnce(page: failingPage)
        let transport = StubTransport { request in
            if fails(request) { return .status(503) }
            switch request.url.path {
            case "/v2/bands": return .json(#"[{"id": 1, "name": "Band 1"}, {"id": 2, "name": "Band 2"}]"#)
            case "/v2/albums": return .json("[" + (1...60).map(Self.album).joined(separator: ", ") + "]")
            case let path where path.hasPrefix("/v2/bands/"):
                let band =
                    Int(
                        request.url.lastPathComponent == "albums"
                            ? request.url.deletingLastPathComponent()
                                .lastPathComponent : "") ?? 0
                return Self.linkedPage(Self.albumsOfBand[band] ?? [], path: path, request: request)
            default: return .status(404)
            }
        }
        let options = RemoteOptions(
            baseURL: Self.base,
            entities: [
                "Band": RemoteEntityOptions(
                    relationships: ["albums": .endpoint("GET /bands/{id}/albums")],
                    fetch: [RemoteEndpoint("GET /bands")]),
                "Album": RemoteEntityOptions(
                    relationships: ["band": .foreignKey("band_id")], fetch: [RemoteEndpoint("GET /albums")]),
            ])
        let remote = try RemoteResponder(
            model: try RemoteFixtures.model(), options: options, transport: transport, environment: [:])
        return (remote, transport)
    }

    @Test func aToManyListBehindAPagedEndpointIsReadToItsLastPage() async throws {
        let (remote, _) = try Self.albumsBehindTheirOwnEndpoint()
        let chain = Chain(handlers: [], terminal: remote)

        let request = FetchRequest(entity: "Band", predicate: try FetchPredicate("albums.@count > 30"))
        let answer = try await chain.fetch(request)
        #expect(answer.objectKeys == (try Self.expected(request)).objectKeys)
        #expect(answer.objectKeys == [.integer(1)], "band 1 has 57 albums, not the 30 of its first page")

        let fault = try await chain.send(
            StoreRequest.relationshipFault(ObjectID(entity: "Band", key: .integer(1)), relationship: "albums"))
        #expect(try fault.relationshipValue().objectIDs.count == 57)
        #expect(fault.related.count == 57)
    }

    /// Each page of a relationship's own list is a request of its own, so a failed page is
    /// retried alone.
    @Test func eachPageOfARelationshipsListIsAPageRequest() async throws {
        let (remote, transport) = try Self.albumsBehindTheirOwnEndpoint(failingOnce: "2")
        let log = SharedLog()
        let chain = Chain(terminal: remote) {
            RetryHandler(options: RetryOptions(baseDelay: .zero), jitter: { $0 })
            RecordingHandler("below", log: log)
        }
        let fault = try await chain.send(
            StoreRequest.relationshipFault(ObjectID(entity: "Band", key: .integer(1)), relationship: "albums"))
        #expect(
            try fault.relationshipValue().objectIDs == (1...57).map { ObjectID(entity: "Album", key: .integer($0)) })
        #expect(
            transport.requests.map { Self.query($0, "page") ?? "1" } == ["1", "2", "2"],
            "page 2 retried alone, page 1 not read again")
        #expect(log.all.filter { $0 == "below ↓ relationship-page" }.count == 3, "\(log.all)")
    }

    @Test func theListsAKeyPathNeedsAreSubRequestsThatCachesKeep() async throws {
        let (remote, transport) = try Self.albumsBehindTheirOwnEndpoint()
        let model = try RemoteFixtures.model()
        let log = SharedLog()
        let chain = Chain(terminal: remote) {
            RecordingHandler("top", log: log)
            MemoryCache(model: model)
        }
        let many = FetchRequest(entity: "Band", predicate: try FetchPredicate("albums.@count > 30"))
        #expect(try await chain.fetch(many).objectKeys == (try Self.expected(many)).objectKeys)
        #expect(log.all.filter { $0 == "top ↓ relationship-fault" }.count == 2, "one per band: \(log.all)")
        #expect(transport.requests.count == 1 + 2 + 1, "the bands, band 1's two pages of albums, band 2's one")

        let few = FetchRequest(entity: "Band", predicate: try FetchPredicate("albums.@count < 5"))
        #expect(try await chain.fetch(few).objectKeys == (try Self.expected(few)).objectKeys)
        #expect(transport.requests.count == 4 + 1, "the bands again; both lists come from the memory cache")
        await chain.shutdown()
    }

    @Test func severalOwnersListsComeFromACachedCompleteCollectionThroughTheInverse() async throws {
        let (remote, transport) = try Self.albumsBehindTheirOwnEndpoint()
        let model = try RemoteFixtures.model()
        let chain = Chain(terminal: remote) { MemoryCache(model: model) }
        _ = try await chain.fetch(FetchRequest(entity: "Album"))
        #expect(transport.requests.count == 1, "every album, with its band as a foreign key")

        let request = FetchRequest(entity: "Band", predicate: try FetchPredicate("albums.@count > 30"))
        #expect(try await chain.fetch(request).objectKeys == (try Self.expected(request)).objectKeys)
        #expect(
            transport.requests.map(\.url.path) == ["/v2/albums", "/v2/bands"],
            "the bands' album lists come from the cached albums, not from GET /bands/{id}/albums")
        await chain.shutdown()
    }

    @Test func aListingThatAnnouncesMorePagesIsReadToTheEndAndCheckedInMemory() async throws {
        // The `band_id` endpoint is declared to take a list, but the backend reads one number
        // and, given a list, answers with the first page of every album and a link onwards.
        let every = Array(1...60)
        let transport = StubTransport { request in
            let bands = Self.query(request, "band_id")?.split(separator: ",").compactMap { Int($0) } ?? []
            guard bands.count == 1 else { return Self.linkedPage(every, path: "/v2/albums", request: request) }
            return .json("[" + (Self.albumsOfBand[bands[0]] ?? []).map(Self.album).joined(separator: ", ") + "]")
        }
        let album = RemoteEntityOptions(
            relationships: ["band": .foreignKey("band_id")],
            fetch: [
                RemoteEndpoint(
                    "GET /albums?band_id={band}",
                    bind: ["band": ParameterBinding("band.id", .oneOf, required: true)])
            ])
        let options = RemoteOptions(
            baseURL: Self.base, entities: ["Band": RemoteEntityOptions(), "Album": album])
        let remote = try RemoteResponder(
            model: try RemoteFixtures.model(), options: options, transport: transport, environment: [:])
        let model = try RemoteFixtures.model()
        let chain = Chain(terminal: remote) {
            PaginationHandler(model: model, options: PaginationOptions(pageSize: 50))
        }
        for format in ["band.id == 2", "band.id IN {1, 2}", "band.id IN {2, 3}"] {
            let request = FetchRequest(entity: "Album", predicate: try FetchPredicate(format), resultType: .count)
            #expect(try await chain.fetch(request) == (try Self.expected(request)), "\(format)")
        }
        #expect(transport.requests.count == 1 + 2 + 2, "one request for one band; both pages for each list")
    }

    /// An endpoint declared without paging whose documents announce a next page is read one
    /// page request at a time, so a failed page is retried alone and every page is a request
    /// that the handlers see.
    @Test(arguments: [false, true])
    func undeclaredLinkPagesArePageRequests(behindAPager: Bool) async throws {
        let fails = Self.failsOnce(page: "2")
        let transport = StubTransport { request in
            if fails(request) { return .status(503) }
            return Self.linkedPage(Array(1...60), path: "/v2/albums", request: request)
        }
        let options = RemoteOptions(
            baseURL: Self.base, entities: ["Album": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /albums")])])
        let model = try RemoteFixtures.model()
        let remote = try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
        let log = SharedLog()
        let pager: [any StoreHandler] = behindAPager ? [PaginationHandler(model: model)] : []
        let chain = Chain(
            handlers: pager + [
                RetryHandler(options: RetryOptions(baseDelay: .zero), jitter: { $0 }),
                RecordingHandler("below", log: log),
            ], terminal: remote)
        let request = FetchRequest(
            entity: "Album", predicate: try FetchPredicate("title ENDSWITH '0'"), resultType: .objectIDs)
        let answer = try await chain.fetch(request)
        #expect(answer == (try Self.expected(request)))
        guard case .objectIDs(let ids) = answer else { throw StoreChainError(.invalidResponse, "no IDs") }
        #expect(ids.count == 6, "10, 20, …, 60: matches on both pages")
        #expect(
            transport.requests.map { Self.query($0, "page") ?? "1" } == ["1", "2", "2"],
            "page 2 retried alone, page 1 not read again")
        #expect(log.all.filter { $0 == "below ↓ page" }.count == 3, "every exchange is a page request")
    }

    /// A dictionaries answer through a key path reads the related objects it names, whether a
    /// pager reads the listing or the terminal answers the fetch itself.
    @Test(arguments: [false, true])
    func dictionariesThroughAKeyPathLoadTheRelatedObjects(behindAPager: Bool) async throws {
        let (remote, _) = try Self.albumsBehindTheirOwnEndpoint()
        let model = try RemoteFixtures.model()
        let pager: [any StoreHandler] = behindAPager ? [PaginationHandler(model: model)] : []
        let chain = Chain(handlers: pager, terminal: remote)
        let request = FetchRequest(
            entity: "Album", predicate: try FetchPredicate("id <= 3 OR id == 58"),
            sortDescriptors: [FetchSortDescriptor("id")], resultType: .dictionaries(["title", "band.name"]))
        #expect(try await chain.fetch(request) == (try Self.expected(request)))
    }

    @Test func aListingNeverEndsShortAtMaxPages() async throws {
        let transport = StubTransport { request in
            Self.linkedPage(Array(1...60), path: "/v2/albums", request: request)
        }
        let options = RemoteOptions(
            baseURL: Self.base, entities: ["Album": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /albums")])],
            maxPages: 1)
        let remote = try RemoteResponder(
            model: try RemoteFixtures.model(), options: options, transport: transport, environment: [:])
        let error = await #expect(throws: StoreChainError.self) {
            _ = try await Chain(handlers: [], terminal: remote).fetch(FetchRequest(entity: "Album"))
        }
        #expect(error?.code == .tooManyPages, "\(String(describing: error))")
        #expect(error?.description.contains("GET /albums") == true)
    }
}

extension FetchResult {
    /// The keys of the objects, in order.
    fileprivate var objectKeys: [Value?] {
        if case .objects(let nodes) = self { nodes.map(\.id.key) } else { [] }
    }
}
