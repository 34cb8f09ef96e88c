import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A listing whose records leave out a to-one's foreign key (a slim list serializer, as Django
/// REST Framework apps often use for lists) while each object's own record has it: a predicate
/// through that to-one reads the objects by key instead of failing, and never takes "not in
/// the listing" for "no related object".
@Suite struct SlimListingKeyPathTests {
    let model: ObjectModel

    init() throws {
        model = try RemoteFixtures.model()
    }

    /// Albums 10 (Low's) and 11 (Lower Dens'); the listing leaves out `band_id`, the records
    /// by key carry it unless `slimRecords`.
    func remote(slimRecords: Bool = false, omitsNulls: Bool = false) throws -> (RemoteResponder, StubTransport) {
        let transport = StubTransport { request in
            let path = request.url.path
            let bands = [10: 1, 11: 2]
            if path.hasSuffix("/albums") {
                return .json(
                    #"{"data": [{"album_id": 10, "title": "Things We Lost"}, {"album_id": 11, "title": "Nootropics"}]}"#
                )
            }
            if let key = Int(path.split(separator: "/").last ?? ""), path.contains("/albums/"), let band = bands[key] {
                let foreignKey = slimRecords ? "" : #", "band_id": \#(band)"#
                return .json(#"{"album_id": \#(key), "title": "Album \#(key)"\#(foreignKey)}"#)
            }
            if path == "/v2/bands/1" { return .json(#"{"id": 1, "attributes": {"name": "Low"}}"#) }
            if path == "/v2/bands/2" { return .json(#"{"id": 2, "attributes": {"name": "Lower Dens"}}"#) }
            return .json(RemoteFixtures.bandsPage)
        }
        var options = RemoteFixtures.options()
        options.entities["Album"]?.fetch = [RemoteEndpoint("GET /albums")]
        options.entities["Album"]?.get = "GET /albums/{id}"
        options.entities["Album"]?.omitsNulls = omitsNulls
        return (try RemoteResponder(model: model, options: options, transport: transport, environment: [:]), transport)
    }

    @Test func aPredicateThroughAToOneTheListingLeavesOutReadsEachObjectByKey() async throws {
        let (remote, transport) = try remote()
        let chain = Chain(handlers: [MemoryCache(model: model)], terminal: remote, tracing: nil)
        let request = try TestData.fetch("Album", where: "band.name == 'Low'")
        let answer = try await chain.fetch(request)
        guard case .objects(let nodes) = answer else { throw StoreChainError(.invalidResponse, "not objects") }
        #expect(nodes.map(\.id.key) == [10])
        #expect(Set(transport.requests.map(\.url.path)).isSuperset(of: ["/v2/albums/10", "/v2/albums/11"]))
        // The caches keep the whole records: the band of album 11 is known without the backend.
        let before = transport.requests.count
        let fault = try await chain.send(
            .relationshipFault(ObjectID(entity: "Album", key: 11), relationship: "band"),
            context: chain.makeContext(cachePolicy: .cacheOnly))
        #expect(try fault.relationshipValue() == .toOne(ObjectID(entity: "Band", key: 2)))
        #expect(transport.requests.count == before)
    }

    @Test func whenTheRecordsByKeyLeaveItOutTooTheFetchFailsSayingSo() async throws {
        let (remote, _) = try remote(slimRecords: true)
        let chain = Chain(handlers: [MemoryCache(model: model)], terminal: remote, tracing: nil)
        let error = await #expect(throws: StoreChainError.self) {
            try await chain.fetch(try TestData.fetch("Album", where: "band.name == 'Low'"))
        }
        #expect(error?.code == .noEndpoint)
        #expect(
            error?.message.contains("own record leaves out 'Album.band' (mapped as the foreign key 'band_id')") == true,
            "\(String(describing: error))")
    }
    /// A relationship fault whose owner's record leaves the foreign key out is not "no band":
    /// answering `.toOne(nil)` would be a silent wrong answer, cached as if true.
    @Test func aRelationshipFaultOnARecordThatLeavesTheForeignKeyOutFailsInsteadOfAnsweringNone() async throws {
        let (remote, _) = try remote(slimRecords: true)
        let chain = Chain(handlers: [MemoryCache(model: model)], terminal: remote, tracing: nil)
        let error = await #expect(throws: StoreChainError.self) {
            try await chain.send(.relationshipFault(ObjectID(entity: "Album", key: 11), relationship: "band"))
        }
        #expect(error?.code == .noEndpoint)
        #expect(
            error?.message.contains("Album/11's own record leaves out 'Album.band'") == true,
            "\(String(describing: error))")
    }
    /// A backend that leaves out fields whose value is null (declared `omits-nulls: true`): a
    /// to-one the records do not mention is none, in the listing and in the record by key.
    @Test func whereTheRecordsLeaveOutNullsAToOneTheyDoNotMentionIsNone() async throws {
        let (remote, transport) = try remote(slimRecords: true, omitsNulls: true)
        let chain = Chain(handlers: [MemoryCache(model: model)], terminal: remote, tracing: nil)
        let album11 = ObjectID(entity: "Album", key: 11)
        #expect(
            try await chain.send(.relationshipFault(album11, relationship: "band")).relationshipValue() == .toOne(nil))
        let answer = try await chain.fetch(try TestData.fetch("Album", where: "band.name == 'Low'"))
        #expect(answer == .objects([]))
        #expect(!transport.requests.map(\.url.path).contains("/v2/albums/10"), "no record is read by key")
        let (slim, _) = try self.remote(slimRecords: true)
        let error = await #expect(throws: StoreChainError.self) {
            _ = try await Chain(handlers: [], terminal: slim, tracing: nil).send(
                .relationshipFault(album11, relationship: "band"))
        }
        #expect(error?.suggestion?.contains("'omits-nulls: true' for Album") == true, "\(String(describing: error))")
    }
}
