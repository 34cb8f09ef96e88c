import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Headers a pipeline configures go out as written: `Accept: application/vnd.api+json` was
/// replaced by `application/json`, so a JSON:API backend that insists on its media type
/// answered 406 to everything.
@Suite struct ConfiguredHeaderTests {
    @Test(arguments: ["Accept", "accept"])
    func aConfiguredAcceptAndContentTypeAreSentAsWritten(name: String) async throws {
        let media = "application/vnd.api+json"
        let transport = StubTransport { request in
            let accepts = request.headers.filter { $0.key.lowercased() == "accept" }.map(\.value)
            guard accepts == [media] else { return .json(#"{"errors": [{"status": "406"}]}"#, status: 406) }
            return request.method == "GET"
                ? .json(#"{"data": [{"id": 1, "name": "Low"}]}"#)
                : .json(#"{"data": {"id": 2, "name": "Wire"}}"#, status: 201)
        }
        let band = RemoteEntityOptions(records: "data", fetch: [RemoteEndpoint("GET /bands")], create: "POST /bands")
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!, entities: ["Band": band],
            headers: [name: media, "Content-Type": media])
        let model = try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
        let remote = try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
        let chain = Chain(handlers: [], terminal: remote)
        guard case .objects(let bands) = try await chain.fetch(FetchRequest(entity: "Band")) else {
            Issue.record("a fetch answers objects")
            return
        }
        #expect(bands.count == 1)
        let insert = Node(id: .temporary(entity: "Band"), attributes: ["name": .string("Wire")])
        _ = try await chain.send(.save(SaveChanges(inserted: [insert])))
        let post = try #require(transport.requests.last)
        #expect(post.method == "POST")
        #expect(post.headers.filter { $0.key.lowercased() == "content-type" }.map(\.value) == [media])
    }
}
