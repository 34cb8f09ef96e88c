import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainHTTP

/// An endpoint declared without paging whose answer says in its body that there is more (a
/// stock Django REST Framework API pages 100 at a time and says so only in its JSON) was taken
/// whole from its first page: a count of 150 albums answered 100, and an album's 57 tracks read
/// as its first 50. Silent wrong answers; now each is an error that names the endpoint and the
/// JSON path that said so.
@Suite struct UndeclaredPagingTests {
    private static let base = URL(string: "https://api.example/v2")!

    /// Albums 1 to 150, answered by a Django REST Framework-style endpoint 100 a page: `count`,
    /// `next` and `previous` beside the `results`.
    private static func albumsByKey(_ request: TransportRequest) -> TransportResponse {
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let keys = (items.first { $0.name == "id__in" }?.value ?? "").split(separator: ",").compactMap { Int($0) }
        let page = Int(items.first { $0.name == "page" }?.value ?? "") ?? 1
        let shown = keys.dropFirst((page - 1) * 100).prefix(100)
        let next =
            keys.count > page * 100 ? #""https://api.example/v2/albums/?page=\#(page + 1)""# : "null"
        let results = shown.map { #"{"id": \#($0), "title": "Album \#($0)"}"# }.joined(separator: ", ")
        return .json(#"{"count": \#(keys.count), "next": \#(next), "previous": null, "results": [\#(results)]}"#)
    }

    private static func remote(_ script: @escaping StubTransport.Script, band: RemoteEntityOptions = .init())
        throws -> (RemoteResponder, StubTransport)
    {
        let transport = StubTransport(script)
        let album = RemoteEntityOptions(
            records: "results",
            fetch: [RemoteEndpoint("GET /albums/?id__in={ids}", bind: ["ids": ParameterBinding("id", .oneOf)])])
        let options = RemoteOptions(baseURL: base, entities: ["Band": band, "Album": album])
        let remote = try RemoteResponder(
            model: try RemoteFixtures.model(), options: options, transport: transport, environment: [:])
        return (remote, transport)
    }

    private static func count(of format: String) throws -> FetchRequest {
        FetchRequest(entity: "Album", predicate: try FetchPredicate(format), resultType: .count)
    }

    @Test func aBatchEndpointThatPagesOnlyInItsBodyFailsInsteadOfAnsweringItsFirstPage() async throws {
        let (remote, transport) = try Self.remote { request in Self.albumsByKey(request) }
        let keys = (1...150).map(String.init).joined(separator: ", ")
        let count = try Self.count(of: "id IN {\(keys)}")
        let chain = Chain(handlers: [], terminal: remote)
        let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(count) }
        let message = error?.message ?? ""
        let file = error?.location?.file ?? ""
        #expect(error?.code == .incompleteData)
        #expect(message.contains("'GET /albums/?id__in={ids}' declares no paging"), "\(message)")
        #expect(message.contains(#"next is "https://api.example/v2/albums/?page=2""#), "\(message)")
        #expect(error?.location?.path == "$.next")
        #expect(file.contains("/v2/albums"), "\(file)")
        #expect(error?.suggestion?.contains("paging") == true)
        #expect(transport.requests.count == 1)

        // What fits in one document is answered, though its body names a total.
        let few = try Self.count(of: "id IN {1, 2, 3}")
        #expect(try await chain.fetch(few) == .count(3))
    }

    @Test(arguments: [
        (#""has_more": true"#, "has_more is true"),
        (#""meta": {"pagination": {"count": 57}}"#, "meta.pagination.count is 57"),
        (#""links": {"next": "/v2/bands/1/albums?page[number]=2"}"#, "links.next is"),
        (#""@odata.nextLink": "https://api.example/v2/bands(1)/albums?$skip=50""#, "@odata.nextLink is"),
        (#""@odata.count": 57"#, "@odata.count is 57"),
    ])
    func aRelationshipEndpointWhoseBodyAnnouncesMoreFails(announcement: String, said: String) async throws {
        let band = RemoteEntityOptions(relationships: ["albums": .endpoint("GET /bands/{id}/albums")])
        let (remote, _) = try Self.remote(
            { _ in
                let albums = (1...50).map { #"{"id": \#($0), "title": "Album \#($0)"}"# }.joined(separator: ", ")
                return .json(#"{"results": [\#(albums)], \#(announcement)}"#)
            }, band: band)
        let chain = Chain(handlers: [], terminal: remote)
        let error = await #expect(throws: StoreChainError.self) {
            try await chain.send(.relationshipFault(ObjectID(entity: "Band", key: 1), relationship: "albums"))
        }
        let message = error?.message ?? ""
        #expect(error?.code == .incompleteData)
        #expect(message.contains("'GET /bands/{id}/albums' declares no paging"), "\(message)")
        #expect(message.contains(said), "\(message)")
    }

    @Test func aBodyThatSaysItIsTheLastPageIsTheWholeAnswer() async throws {
        let band = RemoteEntityOptions(relationships: ["albums": .endpoint("GET /bands/{id}/albums")])
        let (remote, _) = try Self.remote(
            { _ in
                .json(
                    #"{"count": 2, "next": null, "has_more": false, "links": {"next": null}, "#
                        + #""results": [{"id": 1, "title": "A"}, {"id": 2, "title": "B"}]}"#)
            }, band: band)
        let chain = Chain(handlers: [], terminal: remote)
        let response = try await chain.send(
            .relationshipFault(ObjectID(entity: "Band", key: 1), relationship: "albums"))
        #expect(try response.relationshipValue().objectIDs.compactMap(\.key) == [.integer(1), .integer(2)])
    }
}
