import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A hyperlinked API (Django REST Framework's `HyperlinkedModelSerializer`, HAL) names a related
/// object by its URL: `{ link: band }` reads the key from the URL by matching the destination's
/// get endpoint, and a save writes the URL that endpoint makes.
@Suite struct LinkedRelationshipTests {
    static let albums = """
        {"results": [
          {"id": 1, "title": "Trust", "band": "http://proxy.internal/v2/bands/7/"},
          {"id": 2, "title": "Drums", "band": "/v2/bands/8/"},
          {"id": 3, "title": "Ones", "band": null}
        ]}
        """

    /// Albums with bands read by link; the stub's bands; the requests' paths.
    static func remote(albums: String = albums, bandGet: String? = "GET /bands/{id}/") throws -> (
        RemoteResponder, StubTransport
    ) {
        let transport = StubTransport { request in
            switch (request.method, request.url.path(percentEncoded: false)) {
            case ("GET", "/v2/albums/"): return .json(albums)
            case ("GET", "/v2/bands/7/"): return .json(#"{"id": 7, "name": "Low"}"#)
            case ("GET", "/v2/bands/8/"): return .json(#"{"id": 8, "name": "Lush"}"#)
            case ("POST", "/v2/albums/"):
                return .json(#"{"id": 9, "title": "New", "band": "https://api.example/v2/bands/7/"}"#, status: 201)
            default: return .status(404)
            }
        }
        var band = RemoteEntityOptions()
        band.get = bandGet
        var album = RemoteEntityOptions(records: "results", relationships: ["band": .link("band")])
        album.fetch = [RemoteEndpoint("GET /albums/")]
        album.create = "POST /albums/"
        let options = RemoteOptions(baseURL: RemoteFixtures.base, entities: ["Band": band, "Album": album])
        return (
            try RemoteResponder(
                model: try RemoteFixtures.model(), options: options, transport: transport, environment: [:]),
            transport
        )
    }

    @Test func aLinkIsReadAsTheKeyItsGetEndpointTakes() async throws {
        let (remote, transport) = try Self.remote()
        let result = try await Chain(handlers: [], terminal: remote).fetch(
            FetchRequest(
                entity: "Album", predicate: try FetchPredicate(#"band.name BEGINSWITH "L""#),
                sortDescriptors: [.init("title")]))
        guard case .objects(let nodes) = result else {
            Issue.record("expected objects")
            return
        }
        // An absolute link on another host and a path link both name the band by its key.
        #expect(nodes.map { $0[attribute: "title"] } == ["Drums", "Trust"])
        #expect(
            nodes.map { $0.relationships["band"] } == [
                .toOne(ObjectID(entity: "Band", key: 8)), .toOne(ObjectID(entity: "Band", key: 7)),
            ])
        #expect(
            Set(transport.requests.map { $0.url.path(percentEncoded: false) }) == [
                "/v2/albums/", "/v2/bands/7/", "/v2/bands/8/",
            ])
    }

    @Test func aSaveWritesTheLink() async throws {
        let (remote, transport) = try Self.remote()
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "New"],
            relationships: ["band": .toOne(ObjectID(entity: "Band", key: 7))])
        let result = try await remote.respond(to: .save(SaveChanges(inserted: [album])), context: RequestContext())
            .saveResult()
        #expect(result.permanentIDs[album.id] == ObjectID(entity: "Album", key: 9))
        let body = try #require(transport.requests.last?.body)
        let json = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        #expect(json?["band"] as? String == "https://api.example/v2/bands/7/")
    }

    @Test func aLinkToAnotherPathIsALocatedError() async throws {
        let (remote, _) = try Self.remote(albums: #"{"results": [{"id": 1, "title": "T", "band": "/v2/labels/7/"}]}"#)
        let error = await #expect(throws: StoreChainError.self) {
            try await Chain(handlers: [], terminal: remote).fetch(FetchRequest(entity: "Album"))
        }
        #expect(error?.code == .badRecord)
        #expect(
            error?.message
                == "link 'band': '/v2/labels/7/' is not a link to a Band: it does not match 'GET /bands/{id}/' under "
                + "https://api.example/v2")
        #expect(error?.location?.path == "https://api.example/v2/albums/ $.results[0].band")
    }

    @Test func aLinkedDestinationWithoutAGetEndpointIsAMappingProblem() throws {
        let (remote, _) = try Self.remote()
        var options = remote.options
        options.entities["Band"]?.get = nil
        let problems = RemoteResponder.problems(in: options, model: try RemoteFixtures.model())
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.location?.path == "entities.Album.relationships.band.link")
        #expect(problems.first?.message.contains("Band declares no get endpoint") == true, "\(problems)")
    }

    @Test func aTemplateReadsItsPathVariablesBackFromAURL() throws {
        let base = try #require(URL(string: "https://api.example/v1"))
        let album = try RequestTemplate("GET /albums/{id}/")
        #expect(album.pathValues(of: try #require(URL(string: "http://other/v1/albums/5/")), base: base) == ["id": "5"])
        #expect(
            album.pathValues(of: try #require(URL(string: "https://api.example/v1/albums/5")), base: base) == [
                "id": "5"
            ])
        #expect(album.pathValues(of: try #require(URL(string: "https://api.example/v1/bands/5/")), base: base) == nil)
        #expect(album.pathValues(of: try #require(URL(string: "https://api.example/v2/albums/5/")), base: base) == nil)
        #expect(
            album.pathValues(of: try #require(URL(string: "https://api.example/v1/albums/5/tracks/")), base: base)
                == nil)
        let file = try RequestTemplate("GET /files/{name}.json?format=full")
        #expect(
            file.pathValues(of: try #require(URL(string: "https://api.example/v1/files/a%20b.c.json")), base: base)
                == ["name": "a b.c"])
    }
}
