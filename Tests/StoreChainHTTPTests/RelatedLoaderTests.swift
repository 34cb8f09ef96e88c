import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainHTTP

/// The related-object loading on its own, outside a chain (every read goes to the stubbed
/// backend): which key paths a fetch needs, and the cost rule that picks per-owner reads or the
/// destination's whole listing.
@Suite struct RelatedLoaderTests {
    /// Bands whose albums have an endpoint of their own, and albums whose unpaged listing carries
    /// each album's band as a foreign key.
    private static func remote(bands: Int) throws -> (RemoteResponder, StubTransport) {
        let transport = StubTransport { request in
            let path = request.url.path
            let albums = (1...bands).map { band in
                #"{"id": \#(band * 10), "title": "Album of \#(band)", "band_id": \#(band)}"#
            }
            if path == "/v2/albums" { return .json("[" + albums.joined(separator: ", ") + "]") }
            if path.hasPrefix("/v2/bands/"), path.hasSuffix("/albums"),
                let band = Int(path.dropFirst("/v2/bands/".count).dropLast("/albums".count))
            {
                return .json("[" + albums[band - 1] + "]")
            }
            return .json("[]", status: 404)
        }
        var band = RemoteEntityOptions(relationships: ["albums": .endpoint("GET /bands/{id}/albums")])
        band.fetch = [RemoteEndpoint("GET /bands")]
        var album = RemoteEntityOptions(relationships: ["band": .foreignKey("band_id")])
        album.fetch = [RemoteEndpoint("GET /albums")]
        let options = RemoteOptions(baseURL: RemoteFixtures.base, entities: ["Band": band, "Album": album])
        return (
            try RemoteResponder(
                model: try RemoteFixtures.model(), options: options, transport: transport, environment: [:]),
            transport
        )
    }

    @Test func aKeyPathNeedsItsRelatedObjectsUnlessItReadsOnlyTheirKey() throws {
        let (remote, _) = try Self.remote(bands: 1)
        let byBandKey = try FetchRequest(entity: "Album", predicate: FetchPredicate("band.id == 1"))
        let keyOnly = remote.related.neededPaths(try FetchPlan(byBandKey, model: remote.model))
        #expect(keyOnly == [LoadPath(names: ["band"], objectHops: 0)], "the relationship, not the band")
        #expect(
            keyOnly.map { remote.related.namesRead(along: $0, from: "Album") } == [[]],
            "band_id is on the record: nothing to read")
        let byBandName = try FetchRequest(entity: "Album", predicate: FetchPredicate("band.name == 'Low'"))
        #expect(
            try remote.related.neededPaths(FetchPlan(byBandName, model: remote.model))
                == [LoadPath(names: ["band"], objectHops: 1)])
        var sorted = FetchRequest(entity: "Album", sortDescriptors: [FetchSortDescriptor("band.name")])
        sorted.relationshipKeyPathsForPrefetching = ["band"]
        #expect(
            remote.related.neededPaths(try FetchPlan(sorted, model: remote.model))
                == [LoadPath(names: ["band"], objectHops: 1)])
        // A relationship with its own endpoint is read even for its keys: no record carries them.
        let byAlbumKey = try FetchRequest(entity: "Band", predicate: FetchPredicate("ANY albums.id == 10"))
        let endpoint = remote.related.neededPaths(try FetchPlan(byAlbumKey, model: remote.model))
        #expect(endpoint.map { remote.related.namesRead(along: $0, from: "Band") } == [["albums"]])
    }

    /// Few owners read their lists one by one; from three on, an unpaged destination listing
    /// (one request) is cheaper, read once and grouped by the foreign key its records carry.
    @Test(arguments: [(owners: 2, requests: 2, listing: false), (owners: 5, requests: 1, listing: true)])
    func endpointListsAreReadPerOwnerOrFromTheCheaperListing(owners: Int, requests: Int, listing: Bool) async throws {
        let (remote, transport) = try Self.remote(bands: owners)
        let band = try remote.model.requireEntity("Band")
        let ids = (1...owners).map { ObjectID(entity: "Band", key: .integer($0)) }
        var source: [ObjectID: Node] = [:]
        // Through a chain, as the terminal's own reads go: its pager reads the lists.
        let chain = Chain(handlers: [], terminal: remote, tracing: nil)
        let values = try await remote.related.relationshipValues(
            "albums", of: ids, entity: band, source: &source, context: chain.makeContext(),
            serving: .fetch(FetchRequest(entity: "Band")))
        for owner in 1...owners {
            #expect(
                values[ObjectID(entity: "Band", key: .integer(owner))]
                    == .toMany([ObjectID(entity: "Album", key: .integer(owner * 10))]))
            #expect(
                source[ObjectID(entity: "Album", key: .integer(owner * 10))]?.attributes["title"]
                    == .string("Album of \(owner)"))
        }
        #expect(transport.requests.count == requests, "\(transport.requests.map(\.url.path))")
        #expect(transport.requests.contains { $0.url.path == "/v2/albums" } == listing)
    }
}
