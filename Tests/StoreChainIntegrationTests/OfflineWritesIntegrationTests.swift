import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// An app saving through an outbox while the demo backend goes down, fails some requests and
/// rate limits: once it is back and the outbox is replayed, the backend holds exactly what the
/// app saved, each insert once.
@Suite(.serialized) struct OfflineWritesIntegrationTests {
    let backendTests = DemoBackendTests()

    /// What the backend does for a stretch of saves.
    static let weathers: [(String, DemoQuirks)] = [
        ("up", .none), ("down", DemoQuirks(failEvery: 1)), ("flaky", DemoQuirks(failEvery: 3)),
        ("rate limited", DemoQuirks(rateLimitPerSecond: 2)),
    ]

    @Test func randomSavesWhileTheBackendFlipsEndWithTheBackendEqualToTheAppsView() async throws {
        try await backendTests.withBackend { backend, base in
            let path = TemporaryFolder.make("storechain").appending(path: "outbox.sqlite").path
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            // The retry timer never fires on this clock: replays come from successes and sync().
            let outbox = try OutboxHandler(
                model: backend.model, options: OutboxOptions(path: path, retryDelay: .seconds(3600)))
            let chain = Chain(
                handlers: [MemoryCache(model: backend.model), outbox], terminal: remote, clock: ManualClock(),
                tracing: nil)
            let context = ObjectContext(chain: chain, model: backend.model)
            let initialBands = backend.store.snapshot.nodes(of: "Band").count
            var live = try await context.fetch(FetchRequest(entity: "Band"))
            var names: [ManagedObject: String] = [:]
            for band in live { names[band] = try await band.value("name").stringValue }
            var inserted: [ManagedObject] = []
            var deletable: [ManagedObject] = []
            var albums: [(album: ManagedObject, band: ManagedObject, title: String)] = []
            var random = SplitMix64(seed: 17)
            var pendingSaves = 0

            for step in 0..<200 {
                if step % 10 == 0 {
                    backend.setQuirks(Self.weathers[Int.random(in: 0..<Self.weathers.count, using: &random)].1)
                }
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    let band = try context.insert("Band", values: ["name": .string("New \(step)")])
                    names[band] = "New \(step)"
                    live.append(band)
                    inserted.append(band)
                    deletable.append(band)
                case 4..<7:
                    let band = live[Int.random(in: 0..<live.count, using: &random)]
                    try band.set(.string("Renamed \(step)"), for: "name")
                    names[band] = "Renamed \(step)"
                case 7 where !deletable.isEmpty:
                    let band = deletable.remove(at: Int.random(in: 0..<deletable.count, using: &random))
                    context.delete(band)
                    live.removeAll { $0 === band }
                    names[band] = nil
                default:
                    let band = live[Int.random(in: 0..<live.count, using: &random)]
                    let album = try context.insert("Album", values: ["title": .string("Album \(step)")])
                    try album.setRelated(band, for: "band")
                    albums.append((album, band, "Album \(step)"))
                    // A band with an album is not deleted: the backend would refuse it.
                    deletable.removeAll { $0 === band }
                }
                let result = try await context.save()
                if result.isPending { pendingSaves += 1 }
                if step % 7 == 6 { _ = try await context.sync() }
            }

            backend.setQuirks(.none)
            #expect(try await context.sync() == 0)
            #expect(try await outbox.entries().isEmpty, "no save was refused or left behind")
            #expect(pendingSaves > 20, "the backend was out of reach for a good part of the run")
            #expect(!context.hasUnsentChanges)

            let snapshot = backend.store.snapshot
            let insertedBands = inserted.filter { band in live.contains { $0 === band } }
            #expect(snapshot.nodes(of: "Band").count == initialBands + insertedBands.count, "no duplicate inserts")
            for band in live {
                #expect(!band.objectID.isTemporary && !band.hasUnsentChanges, "\(band.objectID)")
                #expect(
                    snapshot.node(for: band.objectID)?[attribute: "name"] == names[band].map(Value.string),
                    "\(band.objectID)")
            }
            for band in inserted where !live.contains(where: { $0 === band }) {
                #expect(snapshot.node(for: band.objectID) == nil, "deleted: \(band.objectID)")
            }
            for (album, band, title) in albums {
                let node = snapshot.node(for: album.objectID)
                #expect(node?[attribute: "title"] == .string(title), "\(album.objectID)")
                #expect(node?.relationships["band"] == .toOne(band.objectID), "\(album.objectID)")
            }
            let titles = snapshot.nodes(of: "Album").compactMap { $0[attribute: "title"].stringValue }
            #expect(titles.filter { $0.hasPrefix("Album ") }.count == albums.count, "each album inserted once")

            // What the app reads back from the backend is what it saved.
            let fetched = try await context.fetch(FetchRequest(entity: "Band", cachePolicy: .reload))
            var seen: [ObjectID: String] = [:]
            for band in fetched { seen[band.objectID] = try await band.value("name").stringValue }
            #expect(seen == Dictionary(uniqueKeysWithValues: live.map { ($0.objectID, names[$0] ?? "") }))
            await chain.shutdown()
        }
    }
}
