import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Redirects followed by the remote responder, each hop an exchange the chain counts: a
/// template without the slash a Django backend wants (`GET /genres` → 301 `/genres/`), one
/// that leads off the backend, and one that never ends.
@Suite struct RedirectTests {
    static func remote(_ script: @escaping StubTransport.Script) throws -> (RemoteResponder, StubTransport) {
        let transport = StubTransport(script)
        let model = try ObjectModel([
            EntityDescription(
                "Genre", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!,
            entities: ["Genre": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /genres")])])
        return (try RemoteResponder(model: model, options: options, transport: transport, environment: [:]), transport)
    }

    @Test func aRedirectIsFollowedOnTheBackendAndEachHopCounts() async throws {
        let (remote, transport) = try Self.remote { request in
            request.url.absoluteString.hasSuffix("/")
                ? .json(#"[{"id": 1, "name": "Rock"}, {"id": 2, "name": "Jazz"}]"#)
                : .status(301, headers: ["Location": request.url.path + "/"])
        }
        let response = try await Chain(handlers: [], terminal: remote).send(.fetch(FetchRequest(entity: "Genre")))
        guard case .objects(let genres) = try response.fetchResult() else {
            Issue.record("a fetch answers objects")
            return
        }
        #expect(genres.count == 2)
        #expect(
            transport.requests.map(\.url.absoluteString) == [
                "https://api.example/genres", "https://api.example/genres/",
            ])
        #expect(remote.traffic.requests == 2)
        #expect(response.info.exchanges == 2)
    }

    @Test func aRedirectOffTheBackendFails() async throws {
        let (remote, transport) = try Self.remote { _ in
            .status(302, headers: ["Location": "https://elsewhere.example/genres"])
        }
        let error = await #expect(throws: StoreChainError.self) {
            try await Chain(handlers: [], terminal: remote).fetch(FetchRequest(entity: "Genre"))
        }
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("was redirected off the backend, to https://elsewhere.example/genres") == true)
        #expect(transport.requests.count == 1)
    }

    @Test func aRedirectLoopEndsAfterFiveHops() async throws {
        let (remote, transport) = try Self.remote { request in .status(307, headers: ["Location": request.url.path]) }
        let error = await #expect(throws: StoreChainError.self) {
            try await Chain(handlers: [], terminal: remote).fetch(FetchRequest(entity: "Genre"))
        }
        #expect(error?.message.contains("was redirected more than 5 times") == true, "\(String(describing: error))")
        #expect(transport.requests.count == 6)
    }
}
