import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainPipeline
import StoreChainTesting
import Testing

/// The query engine plans each fetch request once. A cold key-path fetch through the demo's
/// pipelines (memory-cache → disk-cache → pagination → batching → rate-limit → retry → remote)
/// made a plan in each cache, in the pager, in the terminal for every page and again for the
/// answer; every plan now comes from the model's memo (`FetchPlan.planned`), which the handlers'
/// copies of the model share, and the answer's plan is derived from the fetch's.
@Suite(.serialized) struct PlanningOnceTests {
    @Test(arguments: ["v2", "v3"])
    func aColdKeyPathFetchPlansEachRequestOnce(version: String) async throws {
        let backend = try DemoBackend(bands: 20)
        let port = try await backend.start()
        defer { Task { await backend.stop() } }
        let folder = try PipelineRoundTripTests.demoFolder()
        let pipeline = try Pipeline.load(
            contentsOf: folder.appending(path: "\(version).pipeline.yml"),
            environment: ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path])
        let chain = pipeline.makeChain()
        let plans = pipeline.model.plans
        let request = FetchRequest(
            entity: "Track", predicate: try FetchPredicate("album.band.name BEGINSWITH 'A'"),
            sortDescriptors: [FetchSortDescriptor("title"), FetchSortDescriptor("id")], fetchLimit: 20)
        let (madeBefore, memoBefore) = (plans.made, plans.madeHere)

        let found = try await chain.fetch(request)
        #expect(found == (try backend.store.fetch(request)))
        let made = plans.made - madeBefore
        let planned = plans.madeHere - memoBefore
        #expect(made > 0, "the pipeline's handlers plan over another model than the pipeline's")
        #expect(
            made == planned, "\(made) plans were made, \(planned) of them once per request: a handler planned itself")

        // Warm: every plan is kept.
        _ = try await chain.fetch(request)
        #expect(plans.made - madeBefore == made, "a warm fetch planned again")
        await chain.shutdown()
    }
}
