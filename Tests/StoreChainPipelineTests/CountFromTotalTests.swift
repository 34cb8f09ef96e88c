import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainPipeline
import StoreChainTesting
import Testing

/// Counts through the Bandcamp example's v2 pipeline (memory and disk caches, pagination): a
/// count the backend filters exactly costs the one page that carries `X-Total-Count`, and a
/// stored count answers the next process. The reported case read all 298 pages of tracks,
/// because the caches forwarded every count as a fetch of the objects.
@Suite struct CountFromTotalTests {
    static let pipelineFile = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Examples/Bandcamp/v2.pipeline.yml")

    /// Runs `body` with a way to make a new chain (a new process, as far as the caches go) over
    /// one disk cache folder and a demo backend.
    private func withV2(
        bands: Int = 40, _ body: (DemoBackend, () throws -> Chain) async throws -> Void
    ) async throws {
        let folder = TemporaryFolder.make("count-total")
        let backend = try DemoBackend(bands: bands)
        let port = try await backend.start()
        let environment = ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path]
        var chains: [Chain] = []
        func makeChain() throws -> Chain {
            let chain = try Pipeline.load(contentsOf: Self.pipelineFile, environment: environment).makeChain()
            chains.append(chain)
            return chain
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try await body(backend, makeChain)
        } catch {
            for chain in chains { await chain.shutdown() }
            await backend.stop()
            throw error
        }
        for chain in chains { await chain.shutdown() }
        await backend.stop()
    }

    private func expected(_ backend: DemoBackend, _ request: FetchRequest) throws -> Int {
        guard case .objects(let nodes) = try backend.store.fetch(request) else { return -1 }
        return request.windowed(nodes.count)
    }

    @Test func aCountComesFromTheTotalWithOneRequestAndThenFromTheDiskCache() async throws {
        try await withV2 { backend, makeChain in
            let count = try TestData.fetch("Track").counting
            let tracks = try expected(backend, try TestData.fetch("Track"))
            #expect(tracks > 500, "enough tracks for several pages")

            let cold = try makeChain()
            var before = backend.stats.requests
            #expect(try await cold.fetch(count) == .count(tracks))
            #expect(backend.stats.requests - before == 1, "one page carries the total")

            // A new chain over the same disk cache, as the next process: nothing goes upstream,
            // for the count and for any window of it.
            before = backend.stats.requests
            let warm = try makeChain()
            #expect(try await warm.fetch(count) == .count(tracks))
            var window = count
            window.fetchOffset = tracks - 3
            window.fetchLimit = 10
            #expect(try await warm.fetch(window) == .count(3))
            window.fetchOffset = tracks + 5
            #expect(try await warm.fetch(window) == .count(0))
            #expect(backend.stats.requests == before, "the stored count answers")
        }
    }

    /// The report: with `--policy reload`, a count of 200 bands read 4 pages.
    @Test func aReloadedCountAsksForOnePage() async throws {
        try await withV2(bands: 250) { backend, makeChain in
            let chain = try makeChain()
            var count = try TestData.fetch("Band").counting
            count.cachePolicy = .reload
            let before = backend.stats.requests
            #expect(try await chain.fetch(count) == .count(try expected(backend, try TestData.fetch("Band"))))
            #expect(backend.stats.requests - before == 1)
        }
    }

    /// A count the backend cannot filter still reads every page, and what those pages bring
    /// stays: the whole collection then answers other counts and fetches in the next process.
    @Test func aCountTheBackendCannotFilterLeavesTheWholeCollectionCached() async throws {
        try await withV2 { backend, makeChain in
            let long = try TestData.fetch("Track", where: "seconds > 200")
            let first = try makeChain()
            #expect(try await first.fetch(long.counting) == .count(try expected(backend, long)))

            let before = backend.stats.requests
            let next = try makeChain()
            let longer = try TestData.fetch("Track", where: "seconds > 300")
            #expect(try await next.fetch(longer.counting) == .count(try expected(backend, longer)))
            let firstFive = try TestData.fetch(
                "Track", where: "seconds > 300", sort: [.init("title"), .init("id")], limit: 5)
            guard case .objects(let nodes) = try await next.fetch(firstFive) else {
                Issue.record("no objects")
                return
            }
            guard case .objects(let truth) = try backend.store.fetch(firstFive) else { return }
            #expect(nodes.map(\.id) == truth.map(\.id))
            #expect(backend.stats.requests == before, "the complete collection answers")
        }
    }

    /// Saving a track changes what a stored count of tracks would say: the count is dropped
    /// with the entity's windows, and asked again.
    @Test func aSaveDropsTheStoredCountsOfItsEntity() async throws {
        try await withV2 { backend, makeChain in
            let chain = try makeChain()
            let count = try TestData.fetch("Band").counting
            let bands = try expected(backend, try TestData.fetch("Band"))
            #expect(try await chain.fetch(count) == .count(bands))
            let context = ObjectContext(chain: chain, model: backend.model)
            _ = try context.insert("Band", values: ["name": "Counted"])
            try await context.save()
            #expect(try await chain.fetch(count) == .count(bands + 1))
            #expect(try await makeChain().fetch(count) == .count(bands + 1))
        }
    }
}

extension FetchRequest {
    fileprivate var counting: FetchRequest {
        var request = self
        request.resultType = .count
        return request
    }

    fileprivate func windowed(_ total: Int) -> Int { max(0, min(total - fetchOffset, fetchLimit ?? .max)) }
}
