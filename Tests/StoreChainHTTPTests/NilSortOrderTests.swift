import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Where a backend puts records without a value when it sorts. A fetch sorts nil first when
/// ascending and last when descending (the in-memory store, SQLite, MySQL); PostgreSQL and
/// Oracle do the opposite, so a Django REST Framework or PostgREST API over PostgreSQL answers
/// `?ordering=year` with the albums without a year at the end. A sort pushed there was taken for
/// the fetch's order: a window at the start answered the oldest albums instead of those without a
/// year (a silent wrong answer). A sort of a key path that may be nil is now pushed as the
/// fetch's order only where the pipeline says the backend puts nils where a fetch does.
@Suite struct NilSortOrderTests {
    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Album", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("year", .integer, optional: true),
                    AttributeDescription("title", .string),
                ])
        ])
    }

    /// Album `id`'s year: none for every fifth, else 1990 + id % 7.
    static func year(_ id: Int) -> Int? { id % 5 == 0 ? nil : 1990 + id % 7 }

    /// 30 albums ordered by `?ordering=` (a `-` for descending, the key as the tie-break) with
    /// nils last ascending and first descending, as PostgreSQL sorts; 10 a page, `count` and
    /// `next` in the body.
    static func backend() -> StubTransport {
        StubTransport { request in
            let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let page = items.first { $0.name == "page" }?.value.flatMap { Int($0) } ?? 1
            let ordering = items.first { $0.name == "ordering" }?.value ?? ""
            var ids = Array(1...30)
            if ordering.contains("year") {
                let descending = ordering.hasPrefix("-")
                // PostgreSQL: nil is larger than every value.
                let rank: (Int) -> Int = { year($0) ?? Int.max }
                ids.sort { descending ? (rank($0), $1) > (rank($1), $0) : (rank($0), $0) < (rank($1), $1) }
            }
            let shown = ids.dropFirst((page - 1) * 10).prefix(10).map { id in
                #"{"id": \#(id), "title": "A\#(id)", "year": \#(year(id).map(String.init) ?? "null")}"#
            }
            let next = page < 3 ? #""https://api.example/albums/?page=\#(page + 1)""# : "null"
            return .json(#"{"count": 30, "next": \#(next), "results": [\#(shown.joined(separator: ", "))]}"#)
        }
    }

    /// The remote over `request` (10 a page, `count` and `next` in the body), sorting by `sort`.
    static func remote(
        _ sort: SortBinding, transport: StubTransport, request: String = "GET /albums/?page={page}&ordering={ordering}"
    ) throws -> RemoteResponder {
        var endpoint = RemoteEndpoint(
            request, sort: sort, paging: .pages(page: "page", perPage: "page_size", size: 10, first: 1))
        endpoint.pagingFacts = PagingFacts(next: .body("next"), total: .body("count"))
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!,
            entities: ["Album": RemoteEntityOptions(records: "results", fetch: [endpoint])])
        return try RemoteResponder(model: try model(), options: options, transport: transport, environment: [:])
    }

    static func chain(_ sort: SortBinding, transport: StubTransport, request: String? = nil) throws -> Chain {
        let remote =
            try request.map { try Self.remote(sort, transport: transport, request: $0) }
            ?? Self.remote(sort, transport: transport)
        return Chain(handlers: [PaginationHandler(model: try model())], terminal: remote)
    }

    static func window(_ sort: String, limit: Int, offset: Int = 0) throws -> FetchRequest {
        var request = FetchRequest(
            entity: "Album",
            sortDescriptors: try sort.split(separator: ",").map { try FetchSortDescriptor(parsing: String($0)) })
        request.fetchLimit = limit
        request.fetchOffset = offset
        return request
    }

    /// What the in-memory store answers over the same albums.
    static func expected(_ request: FetchRequest) throws -> [Int] {
        let nodes = (1...30).map { id in
            Node(
                id: ObjectID(entity: "Album", key: .integer(id)),
                attributes: [
                    "id": .integer(id), "title": .string("A\(id)"), "year": year(id).map { .integer($0) } ?? .null,
                ])
        }
        return SortGrammarTests.keys(try InMemoryStore(model: try model(), nodes: nodes).fetch(request))
    }

    @Test(arguments: ["year", "-year", "year,title", "-year,title"])
    func aSortOfAnOptionalAttributeIsRightWhereverTheBackendPutsNils(sort: String) async throws {
        let grammar = SortBinding(
            variable: "ordering", separator: ",", fields: ["id": "id", "title": "title", "year": "year"])
        for (limit, offset) in [(5, 0), (4, 22), (3, 27)] {
            let request = try Self.window(sort, limit: limit, offset: offset)
            let answer = try await Self.chain(grammar, transport: Self.backend()).fetch(request)
            #expect(SortGrammarTests.keys(answer) == (try Self.expected(request)), "\(sort) \(limit) \(offset)")
        }
    }

    /// `explain` says why such a sort runs in memory.
    @Test(arguments: [
        (nil, "the sort does not say where the backend puts nils (nils: smallest where it sorts them first)"),
        (SortBinding.NilOrder.largest, "the backend sorts nils as larger than any value (a fetch, as smaller)"),
    ])
    func explainSaysWhereNilsGo(_ nils: SortBinding.NilOrder?, _ reason: String) async throws {
        var grammar = SortBinding(variable: "ordering", separator: ",", fields: ["id": "id", "year": "year"])
        grammar.nils = nils
        let remote = try Self.remote(grammar, transport: Self.backend())
        let explanation = try await remote.explain(try Self.window("-year", limit: 3))
        #expect(
            explanation.inMemory.contains("sort: -year ('year' may be nil, and \(reason))"), "\(explanation.inMemory)")
    }

    /// Declared where the backend puts them (`nils: smallest`, as SQLite does), a sort of an
    /// optional attribute is pushed as the fetch's order: a window reads only its own page.
    @Test func aBackendDeclaredToSortNilsAsAFetchDoesServesTheWindowFromItsPage() async throws {
        var grammar = SortBinding(variable: "ordering", separator: ",", fields: ["id": "id", "year": "year"])
        grammar.nils = .smallest
        let transport = StubTransport { request in
            let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let page = items.first { $0.name == "page" }?.value.flatMap { Int($0) } ?? 1
            // SQLite's order: nil before every value, the key breaking ties.
            let ids = (1...30).sorted { (Self.year($0) ?? Int.min, $0) < (Self.year($1) ?? Int.min, $1) }
            let shown = ids.dropFirst((page - 1) * 10).prefix(10).map { id in
                #"{"id": \#(id), "title": "A\#(id)", "year": \#(Self.year(id).map(String.init) ?? "null")}"#
            }
            return .json(#"{"count": 30, "next": null, "results": [\#(shown.joined(separator: ", "))]}"#)
        }
        let request = try Self.window("year", limit: 4, offset: 12)
        #expect(
            SortGrammarTests.keys(try await Self.chain(grammar, transport: transport).fetch(request))
                == (try Self.expected(request)))
        #expect(transport.requests.count == 1)
    }

    /// A grammar that writes where nils go (PostgREST's `.nullsfirst`) declares the order it asks for.
    @Test func aGrammarThatPlacesNilsItselfPushesTheSort() async throws {
        var grammar = SortBinding(
            variable: "order", separator: ",", ascending: "{field}.asc.nullsfirst",
            descending: "{field}.desc.nullslast", fields: ["id": "id", "year": "year"])
        grammar.nils = .smallest
        let transport = StubTransport { _ in .json(#"{"count": 0, "next": null, "results": []}"#) }
        _ = try await Self.chain(grammar, transport: transport, request: "GET /albums?order={order}&page={page}")
            .fetch(try Self.window("-year", limit: 3))
        #expect(transport.requests.first?.url.query == "order=year.desc.nullslast%2Cid.asc.nullsfirst&page=1")
    }
}
