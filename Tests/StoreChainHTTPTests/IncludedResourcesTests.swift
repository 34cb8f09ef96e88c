import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A compound document (JSON:API's `include=band`) carries the related records beside the
/// primary ones: they become objects, so a key path through them is answered without asking
/// for them, and what they say is what is answered.
@Suite struct IncludedResourcesTests {
    static let albums = """
        {"data": [
          {"type": "albums", "id": "1", "attributes": {"title": "Trust", "year": 2002},
           "relationships": {"band": {"data": {"type": "bands", "id": "7"}}}},
          {"type": "albums", "id": "2", "attributes": {"title": "Drums", "year": 2011},
           "relationships": {"band": {"data": {"type": "bands", "id": "8"}}}},
          {"type": "albums", "id": "3", "attributes": {"title": "Ones", "year": 2013},
           "relationships": {"band": {"data": null}}}
        ],
        "included": [
          {"type": "bands", "id": "7", "attributes": {"name": "Low"}},
          {"type": "bands", "id": "8", "attributes": {"name": "Lush"}},
          {"type": "labels", "id": "1", "attributes": {"name": "Sub Pop"}}
        ]}
        """

    /// Albums by `band.name`, with or without the `included` option; the requests' paths.
    static func run(included: IncludedResources?) async throws -> (titles: [Value], paths: [String]) {
        let transport = StubTransport { request in
            switch request.url.path {
            case "/albums": return .json(Self.albums)
            case "/bands":
                return .json(
                    #"{"data": [{"type": "bands", "id": "7", "attributes": {"name": "Low"}}, "#
                        + #"{"type": "bands", "id": "8", "attributes": {"name": "Lush"}}]}"#)
            default: return .status(404)
            }
        }
        var band = RemoteEntityOptions(records: "data", attributes: ["name": "attributes.name"])
        band.fetch = [RemoteEndpoint("GET /bands")]
        var album = RemoteEntityOptions(
            records: "data", attributes: ["title": "attributes.title", "year": "attributes.year"],
            relationships: ["band": .foreignKey("relationships.band.data.id")])
        album.fetch = [RemoteEndpoint("GET /albums?include=band")]
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!, entities: ["Band": band, "Album": album],
            included: included)
        let remote = try RemoteResponder(
            model: try RemoteFixtures.model(), options: options, transport: transport, environment: [:])
        let result = try await Chain(handlers: [], terminal: remote).fetch(
            FetchRequest(
                entity: "Album", predicate: try FetchPredicate(#"band.name BEGINSWITH "L""#),
                sortDescriptors: [.init("title")]))
        guard case .objects(let nodes) = result else { return ([], []) }
        return (nodes.map { $0[attribute: "title"] }, transport.requests.map(\.url.path))
    }

    @Test func includedRecordsAnswerKeyPathsWithoutARequest() async throws {
        let included = try await Self.run(included: IncludedResources(types: ["bands": "Band"]))
        #expect(included.titles == ["Drums", "Trust"])
        #expect(included.paths == ["/albums"])
        // Without the option the bands are read from their own listing, to the same answer.
        let separate = try await Self.run(included: nil)
        #expect(separate.titles == included.titles)
        #expect(separate.paths == ["/albums", "/bands"])
    }

    @Test func anIncludedTypeOfAnEntityTheModelLacksIsALocatedError() throws {
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!, entities: [:],
            included: IncludedResources(types: ["bands": "Bnd"]))
        let problems = RemoteResponder.problems(in: options, model: try RemoteFixtures.model())
        #expect(problems.count == 1)
        #expect(problems.first?.location?.path == "included.types.bands")
        #expect(problems.first?.suggestion == "did you mean 'Band'?")
    }

    /// A to-many relationship's linkage (`relationships.albums.data[*].id`): the list of the
    /// related keys, so the relationship is known from the fetch and its fault sends nothing.
    @Test func aToManyLinkageIsTheListOfItsKeys() async throws {
        let transport = StubTransport { _ in
            .json(
                #"{"data": [{"type": "bands", "id": "7", "attributes": {"name": "Low"}, "relationships": "#
                    + #"{"albums": {"data": [{"type": "albums", "id": "2"}, {"type": "albums", "id": "1"}]}}}, "#
                    + #"{"type": "bands", "id": "8", "attributes": {"name": "Lush"}, "relationships": "#
                    + #"{"albums": {"data": []}}}]}"#)
        }
        var band = RemoteEntityOptions(
            records: "data", attributes: ["name": "attributes.name"],
            relationships: ["albums": .foreignKey("relationships.albums.data[*].id")])
        band.fetch = [RemoteEndpoint("GET /bands")]
        let remote = try RemoteResponder(
            model: try RemoteFixtures.model(),
            options: RemoteOptions(baseURL: URL(string: "https://api.example")!, entities: ["Band": band]),
            transport: transport, environment: [:])
        let result = try await Chain(handlers: [], terminal: remote).fetch(
            FetchRequest(entity: "Band", sortDescriptors: [.init("id")]))
        guard case .objects(let bands) = result else {
            Issue.record("expected objects, got \(result)")
            return
        }
        #expect(
            bands.map(\.relationships["albums"]) == [
                .toMany([ObjectID(entity: "Album", key: .integer(2)), ObjectID(entity: "Album", key: .integer(1))]),
                .toMany([]),
            ])
        #expect(transport.requests.count == 1)
    }
}
