import Foundation
import StoreChainTesting
import Testing

@testable import StoreChain

/// Iterating the faulted members of a relationship loads them in batches, not one by one.
@Suite struct BatchFaultingTests {
    /// One album whose node lists 1,000 tracks, so its `tracks` are faults until used.
    private func albumWithTracks(_ count: Int) throws -> InMemoryStore {
        let album = ObjectID(entity: "Album", key: .integer(1))
        let tracks = (1...count).map { ObjectID(entity: "Track", key: .integer($0)) }
        var nodes = [
            Node(
                id: album, attributes: ["id": .integer(1), "title": .string("Long Player")],
                relationships: ["tracks": .toMany(tracks)])
        ]
        for (index, id) in tracks.enumerated() {
            nodes.append(
                Node(
                    id: id,
                    attributes: [
                        "id": .integer(index + 1), "title": .string("Track \(index + 1)"), "seconds": .integer(60),
                    ],
                    relationships: ["album": .toOne(album)]))
        }
        return InMemoryStore(model: try MusicFixture.model(), nodes: nodes)
    }

    private func titles(of context: ObjectContext) async throws -> [Value] {
        let albums = try await context.fetch(FetchRequest(entity: "Album"))
        var titles: [Value] = []
        for track in try await albums[0].relatedObjects("tracks") {
            #expect(track.isFault || titles.count % 100 != 0, "loaded in batches, not with the album")
            titles.append(try await track.value("title"))
        }
        return titles
    }

    @Test func iteratingAThousandFaultedTracksCostsAHandfulOfRequests() async throws {
        let store = try albumWithTracks(1_000)
        let terminal = RecordingResponder(forwardingTo: store)
        let chain = Chain(terminal: terminal) {
            BatchingHandler(model: store.model, options: BatchingOptions(entities: ["Track"], maxBatch: 100))
        }
        let context = ObjectContext(chain: chain, model: store.model)
        let titles = try await titles(of: context)
        #expect(titles == (1...1_000).map { .string("Track \($0)") }, "every track, in order")
        let faultRequests = terminal.count() - 1
        #expect(faultRequests <= 20, "1,000 tracks in \(faultRequests) requests")
        #expect(faultRequests >= 10, "at most 100 a batch")
        await chain.shutdown()
    }

    /// Regression (found by the demo): a batching handler scoped with `.when` was not seen.
    @Test func aScopedBatchingHandlerSetsTheBatchSizeToo() async throws {
        let store = try albumWithTracks(150)
        let terminal = RecordingResponder(forwardingTo: store)
        let batching = BatchingHandler(model: store.model, options: BatchingOptions(entities: ["Track"], maxBatch: 100))
        let chain = Chain(handlers: [batching.when(kinds: [.objectFault], entities: ["Track"])], terminal: terminal)
        let context = ObjectContext(chain: chain, model: store.model)
        #expect(context.faultBatchSize(for: "Track") == 100)
        #expect(context.faultBatchSize(for: "Album") == 1)
        #expect(try await titles(of: context).count == 150)
        #expect(terminal.count() <= 5, "1 fetch and about 2 batches: \(terminal.count())")
        await chain.shutdown()
    }

    /// A handler of one's own that batches faults says so with `FaultBatching`, and the context
    /// fires faults together for it as for `BatchingHandler`: found by what it can do, not by
    /// its type.
    @Test func aHandlerOfOnesOwnThatBatchesFaultsSetsTheBatchSize() async throws {
        struct TrackBatches: FaultBatching {
            func faultBatchSize(for entity: String) -> Int? { entity == "Track" ? 40 : nil }
            func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
                -> StoreResponse
            { try await next(request, context) }
        }
        let store = try albumWithTracks(60)
        let terminal = RecordingResponder(forwardingTo: store)
        let chain = Chain(handlers: [TrackBatches()], terminal: terminal)
        let context = ObjectContext(chain: chain, model: store.model)
        #expect(context.faultBatchSize(for: "Track") == 40)
        #expect(context.faultBatchSize(for: "Album") == 1)
        #expect(chain.handlers(of: (any FaultBatching).self, for: .objectFault, entity: "Track").count == 1)
        let scoped = Chain(handlers: [TrackBatches().when(kinds: [.fetch])], terminal: terminal)
        #expect(scoped.handlers(of: (any FaultBatching).self, for: .objectFault, entity: "Track").isEmpty)
        #expect(ObjectContext(chain: scoped, model: store.model).faultBatchSize(for: "Track") == 1)
        let albums = try await context.fetch(FetchRequest(entity: "Album"))
        let tracks = try await albums[0].relatedObjects("tracks")
        _ = try await tracks[0].value("title")
        #expect(tracks[0..<40].allSatisfy { !$0.isFault } && tracks[40].isFault, "the used track and the 39 after it")
        try terminal.requireForwarded(exactly: 1 + 40)
        await chain.shutdown()
    }

    @Test func withoutABatchingHandlerFaultsFireOneByOne() async throws {
        let store = try albumWithTracks(30)
        let terminal = RecordingResponder(forwardingTo: store)
        let chain = Chain(handlers: [], terminal: terminal)
        let context = ObjectContext(chain: chain, model: store.model)
        #expect(try await titles(of: context).count == 30)
        try terminal.requireForwarded(exactly: 31)
    }

    @Test func anExplicitBatchSizeLoadsNeighboursAndSkipsLoadedOnes() async throws {
        let store = try albumWithTracks(25)
        let terminal = RecordingResponder(forwardingTo: store)
        let chain = Chain(handlers: [], terminal: terminal)
        let context = ObjectContext(chain: chain, model: store.model, faultBatchSize: 10)
        let albums = try await context.fetch(FetchRequest(entity: "Album"))
        let tracks = try await albums[0].relatedObjects("tracks")
        _ = try await tracks[3].value("title")
        #expect(tracks[3...12].allSatisfy { !$0.isFault }, "the used track and the 9 after it")
        #expect(tracks[13].isFault && tracks[0].isFault)
        _ = try await tracks[0].value("title")
        #expect(tracks[0...2].allSatisfy { !$0.isFault } && tracks[13...19].allSatisfy { !$0.isFault })
        #expect(tracks[20].isFault, "10 faults: 0-2 and the next unloaded ones, 13-19")
        try terminal.requireForwarded(exactly: 1 + 10 + 10)
    }

    @Test func objectsByIDAreFaultedInBatchesToo() async throws {
        let store = try albumWithTracks(250)
        let terminal = RecordingResponder(forwardingTo: store)
        let chain = Chain(terminal: terminal) {
            BatchingHandler(model: store.model, options: BatchingOptions(entities: ["Track"], maxBatch: 100))
        }
        let context = ObjectContext(chain: chain, model: store.model)
        let favourites = context.objects(
            with: stride(from: 250, to: 0, by: -2).map { ObjectID(entity: "Track", key: .integer($0)) })
        var seconds: [Value] = []
        for track in favourites { seconds.append(try await track.value("seconds")) }
        #expect(seconds == Array(repeating: .integer(60), count: 125))
        #expect(terminal.count() == 2, "125 tracks: a batch of 100, then 25")
        await chain.shutdown()
    }
}
