import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainHTTP

/// Faults the REST adapter has no single exchange for, the pager answers through the chain: a
/// relationship its records do not hold and that has no endpoint of its own as a fetch through
/// its to-one inverse (to-many or to-one alike), an object of an entity with no get endpoint as
/// a fetch by its key. The adapter itself makes no read beside its one exchange.
@Suite struct RelationshipThroughInverseTests {
    private static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Person", key: "id", attributes: [AttributeDescription("id", .integer)],
                relationships: [
                    RelationshipDescription("passport", .toOne, "Passport", inverse: "holder", optional: true)
                ]),
            EntityDescription(
                "Passport", key: "id", attributes: [AttributeDescription("id", .integer)],
                relationships: [
                    RelationshipDescription("holder", .toOne, "Person", inverse: "passport", optional: true)
                ]),
        ])
    }

    private static func remote() throws -> (RemoteResponder, StubTransport) {
        let transport = StubTransport { request in
            request.url.path == "/v2/passports"
                ? .json(#"[{"id": 7, "holder_id": 1}, {"id": 8, "holder_id": 2}]"#) : .status(404)
        }
        let options = RemoteOptions(
            baseURL: RemoteFixtures.base,
            entities: [
                "Person": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /people")]),
                "Passport": RemoteEntityOptions(
                    relationships: ["holder": .foreignKey("holder_id")], fetch: [RemoteEndpoint("GET /passports")]),
            ])
        return (
            try RemoteResponder(model: try Self.model(), options: options, transport: transport, environment: [:]),
            transport
        )
    }

    @Test func anObjectWithNoGetEndpointIsReadByAFetchOfItsKey() async throws {
        let (remote, transport) = try Self.remote()
        let fault = StoreRequest.objectFault(ObjectID(entity: "Passport", key: 8))
        let refused = await #expect(throws: StoreChainError.self) {
            try await remote.respond(to: fault, context: RequestContext())
        }
        #expect(refused?.code == .noEndpoint)
        #expect(transport.requests.isEmpty, "the terminal alone reads nothing beside one exchange")

        let chain = Chain(handlers: [], terminal: remote, tracing: nil)
        let answer = try await chain.send(fault)
        #expect(try answer.objectNode()?.relationships["holder"] == .toOne(ObjectID(entity: "Person", key: 2)))
        #expect(transport.requests.map(\.url.path) == ["/v2/passports"])
        await chain.shutdown()
    }

    @Test func aToOneWithNoMappingIsReadThroughItsInverse() async throws {
        let (remote, transport) = try Self.remote()
        let fault = StoreRequest.relationshipFault(ObjectID(entity: "Person", key: 1), relationship: "passport")
        let refused = await #expect(throws: StoreChainError.self) {
            try await remote.respond(to: fault, context: RequestContext())
        }
        #expect(refused?.code == .noEndpoint)
        #expect(refused?.description.contains("'Person.passport' is neither in Person's records") == true)
        #expect(transport.requests.isEmpty, "the terminal alone reads nothing beside one exchange")

        let chain = Chain(handlers: [], terminal: remote, tracing: nil)
        let answer = try await chain.send(fault)
        #expect(try answer.relationshipValue() == .toOne(ObjectID(entity: "Passport", key: 7)))
        #expect(answer.related.map(\.id) == [ObjectID(entity: "Passport", key: 7)])
        #expect(transport.requests.map(\.url.path) == ["/v2/passports"])
        await chain.shutdown()
    }
}
