import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// The remote adapter answering a pager one page at a time, in each paging style, against a
/// stubbed listing of 57 bands (ordered by key, which is also name order).
@Suite struct RemotePagingTests {
    static let count = 57

    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
    }

    static func record(_ key: Int) -> String { #"{"id": \#(key), "name": "Band \#(String(format: "%02d", key))"}"# }

    /// Records `start..<start+size` of the listing, as a JSON array.
    static func slice(_ start: Int, _ size: Int) -> String {
        let keys = start < count ? Array((start + 1)...min(count, start + size)) : []
        return "[" + keys.map(record).joined(separator: ", ") + "]"
    }

    static func query(_ request: TransportRequest, _ name: String) -> String? {
        URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    /// A remote adapter over a stubbed backend that pages in `style`.
    static func remote(_ style: PageInfo.Style, cursor: @escaping @Sendable (Int) -> String = { "\"\($0)\"" })
        throws -> (RemoteResponder, StubTransport)
    {
        let transport = StubTransport { request in
            switch style {
            case .pageNumber:
                let page = Int(query(request, "page") ?? "") ?? 1
                let size = Int(query(request, "per_page") ?? "") ?? 10
                return .json(
                    #"{"data": \#(slice((page - 1) * size, size))}"#, headers: ["X-Total-Count": String(count)])
            case .offset:
                let offset = Int(query(request, "offset") ?? "") ?? 0
                return .json(#"{"data": \#(slice(offset, Int(query(request, "limit") ?? "") ?? 10))}"#)
            case .cursor:
                let start = Int(query(request, "cursor") ?? "") ?? 0
                let next = start + 10 < count ? cursor(start + 10) : "null"
                return .json(#"{"data": \#(slice(start, 10)), "next": \#(next)}"#)
            case .link:
                let start = Int(query(request, "after") ?? "") ?? 0
                let link = start + 10 < count ? ["Link": #"</v2/bands?after=\#(start + 10)>; rel="next""#] : [:]
                return .json(#"{"data": \#(slice(start, 10))}"#, headers: link)
            }
        }
        let endpoint: RemoteEndpoint =
            switch style {
            case .pageNumber:
                RemoteEndpoint(
                    "GET /bands?page={page}&per_page={per_page}",
                    paging: .pages(page: "page", perPage: "per_page", size: 10, first: 1), keyOrdered: true)
            case .offset:
                RemoteEndpoint(
                    "GET /bands?offset={offset}&limit={limit}",
                    paging: .offset(offset: "offset", limit: "limit", size: 10), keyOrdered: true)
            case .cursor:
                RemoteEndpoint(
                    "GET /bands?cursor={cursor}",
                    paging: .cursor(variable: "cursor", next: "next", limit: nil, size: 10),
                    keyOrdered: true)
            case .link:
                RemoteEndpoint("GET /bands", paging: .link, keyOrdered: true)
            }
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example/v2")!,
            entities: ["Band": RemoteEntityOptions(records: "data", fetch: [endpoint])])
        return (
            try RemoteResponder(model: try model(), options: options, transport: transport, environment: [:]), transport
        )
    }

    static func expected(_ request: FetchRequest) throws -> FetchResult {
        let nodes = (1...count).map { key in
            Node(
                id: ObjectID(entity: "Band", key: .integer(key)),
                attributes: ["id": .integer(key), "name": .string("Band \(String(format: "%02d", key))")])
        }
        return try InMemoryStore(model: try model(), nodes: nodes).fetch(request)
    }

    static func chain(_ remote: RemoteResponder) throws -> Chain {
        Chain(handlers: [PaginationHandler(model: try model(), options: .init(concurrency: 3))], terminal: remote)
    }

    @Test(arguments: [PageInfo.Style.pageNumber, .offset, .cursor, .link])
    func windowsAreTheSameAsReadingEverything(style: PageInfo.Style) async throws {
        for (offset, limit) in [(0, 10), (10, 10), (15, 20), (50, 10), (56, 5), (60, 5)] {
            let (remote, _) = try Self.remote(style)
            let request = FetchRequest(entity: "Band", fetchLimit: limit, fetchOffset: offset)
            #expect(try await Self.chain(remote).fetch(request) == (try Self.expected(request)), "\(style) \(offset)")
        }
        let (remote, _) = try Self.remote(style)
        let all = FetchRequest(entity: "Band", sortDescriptors: [try FetchSortDescriptor(parsing: "-name")])
        #expect(try await Self.chain(remote).fetch(all) == (try Self.expected(all)))
    }

    /// A rate limit counts exchanges: a fetch of two pages takes two slots, not three. (When the
    /// terminal walked the pages itself, the fetch took a slot and each page another, so a limit
    /// of 20 a second let about 10 exchanges a second through.)
    @Test func aRateLimitTakesOneSlotPerPageAndNoneForTheFetch() async throws {
        let (remote, transport) = try Self.remote(.pageNumber)
        let limit = RateLimitHandler(options: RateLimitOptions(rate: 1e-6, burst: 2, mode: .failFast))
        let chain = Chain(handlers: [limit], terminal: remote, clock: ManualClock(), tracing: nil)
        #expect(
            try await chain.fetch(FetchRequest(entity: "Band", fetchLimit: 15))
                == (try Self.expected(
                    FetchRequest(entity: "Band", fetchLimit: 15))))
        #expect(transport.requests.count == 2)
        let refused = await #expect(throws: StoreChainError.self) {
            try await chain.send(.objectFault(ObjectID(entity: "Band", key: 1)))
        }
        #expect(refused?.code == .rateLimited, "the two slots went to the two pages")
    }

    @Test func pageNumbersAreAskedForByNumberAndTheTotalEndsTheListing() async throws {
        let (remote, transport) = try Self.remote(.pageNumber)
        _ = try await Self.chain(remote).fetch(FetchRequest(entity: "Band", fetchLimit: 10, fetchOffset: 25))
        #expect(
            transport.requests.compactMap { $0.url.query }.sorted() == ["page=3&per_page=10", "page=4&per_page=10"])
        let (everything, pages) = try Self.remote(.pageNumber)
        _ = try await Self.chain(everything).fetch(FetchRequest(entity: "Band"))
        #expect(pages.requests.count == 6, "57 records, 10 a page, and no empty page after the total")
    }

    /// GitHub's `Link: <…?p=6&per_page=10>; rel="last"` says where the listing ends, so pages
    /// read several at once stop there instead of reading empty pages past the end.
    @Test func aLastLinkEndsTheWaves() async throws {
        let transport = StubTransport { request in
            let page = Int(Self.query(request, "p") ?? "") ?? 1
            let size = Int(Self.query(request, "per_page") ?? "") ?? 10
            let last = (Self.count + size - 1) / size
            var links = [#"</v2/bands?p=\#(last)&per_page=\#(size)>; rel="last""#]
            if page < last { links.insert(#"</v2/bands?p=\#(page + 1)&per_page=\#(size)>; rel="next""#, at: 0) }
            return .json(
                #"{"data": \#(Self.slice((page - 1) * size, size))}"#, headers: ["Link": links.joined(separator: ", ")])
        }
        let endpoint = RemoteEndpoint(
            "GET /bands?p={page}&per_page={per_page}",
            paging: .pages(page: "page", perPage: "per_page", size: 10, first: 1), keyOrdered: true)
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example/v2")!,
            entities: ["Band": RemoteEntityOptions(records: "data", fetch: [endpoint])])
        let remote = try RemoteResponder(
            model: try Self.model(), options: options, transport: transport, environment: [:])
        let all = FetchRequest(entity: "Band")
        #expect(try await Self.chain(remote).fetch(all) == (try Self.expected(all)))
        #expect(transport.requests.count == 6, "57 records, 10 a page: pages 1 to 6 and no empty page 7")
    }

    @Test func offsetsAreAskedForAtTheWindowsStart() async throws {
        let (remote, transport) = try Self.remote(.offset)
        _ = try await Self.chain(remote).fetch(FetchRequest(entity: "Band", fetchLimit: 10, fetchOffset: 25))
        #expect(transport.requests.compactMap { $0.url.query } == ["offset=25&limit=10"])
    }

    @Test func cursorsAndLinksAreFollowedInOrder() async throws {
        let (cursor, cursorTransport) = try Self.remote(.cursor, cursor: { String($0) })
        _ = try await Self.chain(cursor).fetch(FetchRequest(entity: "Band", fetchLimit: 5, fetchOffset: 22))
        #expect(cursorTransport.requests.map { $0.url.query ?? "" } == ["", "cursor=10", "cursor=20"])
        let (link, linkTransport) = try Self.remote(.link)
        _ = try await Self.chain(link).fetch(FetchRequest(entity: "Band", fetchLimit: 5, fetchOffset: 22))
        #expect(linkTransport.requests.map { $0.url.query ?? "" } == ["", "after=10", "after=20"])
    }

    @Test func aCursorThatIsNeitherTextNorANumberIsAClearError() async throws {
        let (remote, _) = try Self.remote(.cursor, cursor: { _ in #"{"offset": 10}"# })
        let error = await #expect(throws: StoreChainError.self) {
            _ = try await Self.chain(remote).fetch(FetchRequest(entity: "Band"))
        }
        #expect(error?.code == .badRecord)
        #expect(error?.description.contains("cursor is object") == true)
        #expect(error?.description.contains("$.next") == true)
        #expect(error?.description.contains("https://api.example/v2/bands") == true, "\(String(describing: error))")
    }

    @Test func aMalformedLinkHeaderIsAClearError() async throws {
        let transport = StubTransport { _ in
            .json(#"{"data": [{"id": 1, "name": "A"}]}"#, headers: ["Link": "/v2/bands?after=1; rel=next"])
        }
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example/v2")!,
            entities: [
                "Band": RemoteEntityOptions(records: "data", fetch: [RemoteEndpoint("GET /bands", paging: .link)])
            ])
        let remote = try RemoteResponder(
            model: try Self.model(), options: options, transport: transport, environment: [:])
        let error = await #expect(throws: StoreChainError.self) {
            _ = try await Self.chain(remote).fetch(FetchRequest(entity: "Band"))
        }
        #expect(error?.code == .badRecord)
        #expect(error?.description.contains("malformed Link header: expected '<url>'") == true)
    }

    @Test func aPageSaysWhatTheBackendApplied() async throws {
        let model = try RemoteFixtures.model()
        var options = RemoteFixtures.options()
        options.entities["Band"]?.fetch[0].request = "GET /bands/search?q={name}&o={o}&l={l}"
        options.entities["Band"]?.fetch[0].paging = .offset(offset: "o", limit: "l", size: 10)
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        let remote = try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
        let context = RequestContext()
        let first = PageRequest(.record(0))
        // The search ignores case: exact for BEGINSWITH[c], a superset for BEGINSWITH.
        let exact = try await remote.respond(
            to: .page(TestData.fetch("Band", where: "name BEGINSWITH[c] 'lo'"), first), context: context)
        #expect(exact.info.page?.listing.predicate == true)
        #expect(exact.info.page?.style == .offset)
        let superset = try await remote.respond(
            to: .page(TestData.fetch("Band", where: "name BEGINSWITH 'Lo'"), first), context: context)
        #expect(superset.info.page?.listing.predicate == false)
        #expect(try superset.fetchResult() == exact.fetchResult())
        // Two facts: what the backend's listing applied, and what was done to the page's records
        // (nothing the terminal vouches for: the records as the backend sent them, both times;
        // the pager checks the predicate on each).
        #expect(!exact.info.applied.predicate && !superset.info.applied.predicate)
        #expect(exact.info.applied.sort == exact.info.page?.listing.sort)
    }

    /// A page (or an endpoint's one document) is one exchange: the terminal sends the records as
    /// the backend sent them and loads nothing; the pager above it loads what the predicate reads
    /// (the bands, as a fetch through the chain) and keeps the matches.
    @Test(arguments: [true, false])
    func aPageIsOneExchangeAndThePagerLoadsWhatThePredicateReads(paged: Bool) async throws {
        let model = try RemoteFixtures.model()
        var options = RemoteFixtures.options()
        options.entities["Album"]?.fetch = [
            paged
                ? RemoteEndpoint("GET /albums?o={o}&l={l}", paging: .offset(offset: "o", limit: "l", size: 10))
                : RemoteEndpoint("GET /albums")
        ]
        let transport = StubTransport { request in
            if request.url.path.hasSuffix("/albums") {
                return .json(
                    #"{"data": [{"album_id": 10, "title": "Things We Lost", "band_id": 1},"#
                        + #" {"album_id": 20, "title": "Nest", "band_id": 2}]}"#)
            }
            let band = request.url.lastPathComponent
            let name = band == "1" ? "Low" : "Nest Makers"
            return .json(#"{"id": \#(band), "attributes": {"name": "\#(name)"}}"#)
        }
        let remote = try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
        let request = try TestData.fetch("Album", where: "band.name == 'Low'")
        let page = try await remote.respond(to: .page(request, PageRequest(.record(0))), context: RequestContext())
        #expect(transport.requests.map(\.url.path) == ["/v2/albums"], "one exchange, no related read")
        #expect(try page.fetchedObjects(for: request).map(\.id.key) == [.integer(10), .integer(20)])
        #expect(!page.info.applied.predicate, "the records as the backend sent them")

        let chain = Chain(handlers: [], terminal: remote, tracing: nil)
        let answer = try await chain.fetch(request)
        guard case .objects(let albums) = answer else { throw StoreChainError(.invalidResponse, "\(answer)") }
        #expect(albums.map(\.id.key) == [.integer(10)])
        #expect(
            transport.requests.map(\.url.path) == ["/v2/albums", "/v2/albums", "/v2/bands/1", "/v2/bands/2"]
                || transport.requests.map(\.url.path) == ["/v2/albums", "/v2/albums", "/v2/bands/2", "/v2/bands/1"],
            "the page again, then the bands the predicate reads, each by its key")
        await chain.shutdown()
    }
}
