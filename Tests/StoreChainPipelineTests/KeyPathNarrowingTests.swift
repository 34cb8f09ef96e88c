import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

/// A condition on a key path through to-one relationships (`album.band.name == X` on Track) that
/// no endpoint takes, read as the keys of the related objects that meet it, where an endpoint
/// takes those keys: through the demo's v2 pipeline, a band's tracks cost a band search, the
/// band's albums and one batch of tracks, where the listing and every album cost 1,791 requests.
@Suite(.serialized) struct KeyPathNarrowingTests {
    /// The v2 example pipeline against a fresh demo backend of `bands` bands.
    func withV2(bands: Int = 20, _ body: (Chain, DemoBackend) async throws -> Void) async throws {
        let backend = try DemoBackend(bands: bands)
        let port = try await backend.start()
        do {
            let folder = try PipelineRoundTripTests.demoFolder()
            let pipeline = try Pipeline.load(
                contentsOf: folder.appending(path: "v2.pipeline.yml"),
                environment: ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path])
            let chain = pipeline.makeChain()
            try await body(chain, backend)
            await chain.shutdown()
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    @Test func aBandsTracksCostThreeRequestsAndAgreeWithTheBackend() async throws {
        try await withV2 { chain, backend in
            let name = try #require(
                backend.store.node(for: ObjectID(entity: "Band", key: .integer(3)))?[attribute: "name"])
            let request = FetchRequest(
                entity: "Track",
                predicate: .comparison(Comparison(.keyPath(["album", "band", "name"]), .equal, .constant(name))),
                sortDescriptors: [FetchSortDescriptor("id")])
            let found = try await chain.fetch(request)
            #expect(found == (try backend.store.fetch(request)))
            guard case .objects(let tracks) = found else {
                Issue.record("no objects: \(found)")
                return
            }
            #expect(!tracks.isEmpty)
            #expect(backend.stats.requests <= 3, "\(backend.stats.requestsByRoute)")

            backend.resetStats()
            var count = request
            count.resultType = .count
            #expect(try await chain.fetch(count) == .count(tracks.count))
            #expect(backend.stats.requests <= 1, "the band's albums are cached: \(backend.stats.requestsByRoute)")
        }
    }

    /// A condition no related object meets answers nothing without reading the listing.
    @Test func aConditionNoRelatedObjectMeetsAnswersNothing() async throws {
        try await withV2 { chain, backend in
            let request = FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.band.name == 'Nobody At All'"))
            #expect(try await chain.fetch(request) == .objects([]))
            #expect(backend.stats.requests <= 1, "\(backend.stats.requestsByRoute)")
        }
    }

    /// Beside other conditions the endpoint takes, and a window: still right.
    @Test func aNarrowedFetchWithAWindowAndOtherConditionsAgreesWithTheBackend() async throws {
        try await withV2 { chain, backend in
            for text in [
                "album.band.country == 'SE' AND number <= 3", "album.year >= 2000 AND album.band.name BEGINSWITH 'S'",
                "album.band.id == 4",
            ] {
                let request = FetchRequest(
                    entity: "Track", predicate: try FetchPredicate(text),
                    sortDescriptors: [FetchSortDescriptor("title"), FetchSortDescriptor("id")],
                    fetchLimit: 7, fetchOffset: 2)
                #expect(try await chain.fetch(request) == (try backend.store.fetch(request)), "\(text)")
            }
        }
    }
}
