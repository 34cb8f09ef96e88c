import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A relationship's own endpoint pages in any style a fetch endpoint does (page numbers, offsets,
/// cursors, links), with its paging facts: before, it could only follow next links, so a nested
/// list paged by number or offset with no next link (`GET /bands/{id}/albums?page=`) was read to
/// its first page and failed, or could not be declared.
@Suite struct RelationshipPagingTests {
    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Band", key: "id", attributes: [AttributeDescription("id", .integer)],
                relationships: [RelationshipDescription("albums", .toMany(ordered: true), "Album", inverse: "band")]),
            EntityDescription(
                "Album", key: "id", attributes: [AttributeDescription("id", .integer)],
                relationships: [RelationshipDescription("band", .toOne, "Band", inverse: "albums", optional: true)]),
        ])
    }

    /// Band 1's albums 1…`count`, by `?page=` (20 a page, 404 past the end), `?offset=&limit=`,
    /// or `?starting_after=&limit=`, with `has_more` in the body and, with `statesTotal`,
    /// `X-Total-Count`; at most 20 a page.
    static func backend(count: Int, statesTotal: Bool = false) -> StubTransport {
        StubTransport { request in
            let page = BodyPagingTests.query(request, "page")
            let limit = min(BodyPagingTests.query(request, "limit") ?? 20, 20)
            let start: Int
            if let page {
                guard page == 1 || (page - 1) * 20 < count else {
                    return .json(#"{"detail": "Invalid page."}"#, status: 404)
                }
                start = (page - 1) * 20
            } else {
                start =
                    BodyPagingTests.query(request, "offset") ?? BodyPagingTests.query(request, "starting_after") ?? 0
            }
            let keys = start < count ? Array((start + 1)...min(count, start + limit)) : []
            let data = keys.map { #"{"id": \#($0)}"# }.joined(separator: ", ")
            return .json(
                #"{"data": [\#(data)], "has_more": \#(start + limit < count)}"#,
                headers: statesTotal ? ["X-Total-Count": "\(count)"] : [:])
        }
    }

    static func albums(_ relationship: RemoteRelationship, transport: StubTransport) async throws -> [Int] {
        let options = RemoteOptions(
            baseURL: BodyPagingTests.base,
            entities: [
                "Band": RemoteEntityOptions(relationships: ["albums": relationship]),
                "Album": RemoteEntityOptions(records: "data"),
            ])
        let remote = try RemoteResponder(model: try model(), options: options, transport: transport, environment: [:])
        let response = try await Chain(handlers: [], terminal: remote).send(
            .relationshipFault(ObjectID(entity: "Band", key: 1), relationship: "albums"))
        return try response.relationshipValue().objectIDs.compactMap {
            if case .integer(let key)? = $0.key { Int(key) } else { nil }
        }
    }

    static func queries(_ transport: StubTransport) -> [String] { transport.requests.map { $0.url.query ?? "" } }

    /// By page number with no fact declared: a short page is the last, and a page past the end
    /// (Django REST Framework's 404 after a full last page) ends the list.
    @Test(arguments: [(57, ["page=1", "page=2", "page=3"]), (60, ["page=1", "page=2", "page=3", "page=4"])])
    func byPageNumber(count: Int, expected: [String]) async throws {
        let transport = Self.backend(count: count)
        let relationship = RemoteRelationship.endpoint(
            "GET /bands/{id}/albums?page={page}", style: .pages(page: "page", perPage: "per_page", size: 20, first: 1))
        #expect(try await Self.albums(relationship, transport: transport) == Array(1...count))
        #expect(Self.queries(transport) == expected)
    }

    /// By offset, to the total a header states: no page past it is asked for.
    @Test func byOffsetToTheStatedTotal() async throws {
        let transport = Self.backend(count: 60, statesTotal: true)
        let relationship = RemoteRelationship.endpoint(
            "GET /bands/{id}/albums?offset={offset}&limit={limit}", paging: PagingFacts(),
            style: .offset(offset: "offset", limit: "limit", size: 20))
        #expect(try await Self.albums(relationship, transport: transport) == Array(1...60))
        #expect(Self.queries(transport) == ["offset=0&limit=20", "offset=20&limit=20", "offset=40&limit=20"])
    }

    /// After the last record's key, while the body's flag says more follow.
    @Test func afterTheLastRecord() async throws {
        let transport = Self.backend(count: 45)
        let relationship = RemoteRelationship.endpoint(
            "GET /bands/{id}/albums?limit={limit}&starting_after={after}",
            paging: PagingFacts(hasMore: .body("has_more")),
            style: .cursor(variable: "after", next: .lastRecord("id"), limit: "limit", size: 20))
        #expect(try await Self.albums(relationship, transport: transport) == Array(1...45))
        #expect(Self.queries(transport) == ["limit=20", "limit=20&starting_after=20", "limit=20&starting_after=40"])
    }

    /// A backend that sends fewer than asked (20 of 50) to an endpoint that states nothing: the
    /// short first page would be taken for the last, but its body says there is more.
    @Test func aShortPageWhoseBodySaysThereIsMoreIsAnError() async throws {
        let relationship = RemoteRelationship.endpoint(
            "GET /bands/{id}/albums?limit={limit}&starting_after={after}",
            style: .cursor(variable: "after", next: .lastRecord("id"), limit: "limit", size: 50))
        let error = await #expect(throws: StoreChainError.self) {
            try await Self.albums(relationship, transport: Self.backend(count: 45))
        }
        #expect(error?.code == .incompleteData, "\(String(describing: error))")
        #expect(error?.location?.path == "$.has_more", "\(String(describing: error))")
    }
}
