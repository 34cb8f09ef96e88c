import Foundation
import Logging
import StoreChain
import StoreChainDemoBackend
import StoreChainPipeline
import StoreChainSQLite

/// The last part of `storechain demo`: saving while the backend is down, through an outbox,
/// and replaying after a restart — with the permanent IDs, the single requests the backend
/// received, and a conflict settled by `merge`.
struct DemoOfflineWritesTour {
    let bands: Int

    /// The v2 pipeline with an outbox below a memory cache (and no retry: the outbox keeps what
    /// cannot be sent).
    static func pipeline() throws -> String {
        guard let terminal = DemoPipelines.v2.range(of: "terminal:") else {
            throw StoreChainError(.invalidRequest, "the demo's v2 pipeline has no terminal")
        }
        return """
            # v2 with an outbox: saves made while the backend is down are kept and sent later.
            model: music.model.yml
            handlers:
              - memory-cache: { ttl: 5m }
              - outbox: { path: ./outbox.sqlite, retry-delay: 1h, conflict-policy: merge }

            """ + DemoPipelines.v2[terminal.lowerBound...]
    }

    func run() async throws {
        let backend = try DemoBackend(bands: bands)
        let port = try await backend.start()
        let folder = FileManager.default.temporaryDirectory.appending(path: "storechain-demo-outbox-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try await tour(backend, port: port, folder: folder)
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    private func tour(_ backend: DemoBackend, port: Int, folder: URL) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        let file = folder.appending(path: "offline.pipeline.yml")
        try Self.pipeline().write(to: file, atomically: true, encoding: .utf8)
        let environment = ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path]
        var logger = Logger(label: "storechain.demo")
        logger.logLevel = .critical
        func open() throws -> Chain {
            try Pipeline.load(contentsOf: file, environment: environment).makeChain(logger: logger)
        }
        let edited = ObjectID(entity: "Album", key: .integer(2))
        // Someone has edited album 2 before: it has a version, which the app's update is based on.
        _ = try backend.store.save(SaveChanges(updated: [Node(id: edited, attributes: ["price": 7.5])]))

        print("\nOffline writes: the v2 pipeline with an outbox (memory-cache, outbox, remote).")
        let first = try open()
        let context = ObjectContext(chain: first, model: backend.model)
        let album = context.object(with: edited)
        let title = try await album.value("title")
        backend.setQuirks(DemoQuirks(failEvery: 1))
        let band = try context.insert("Band", values: ["name": "Night Tide"])
        let newAlbum = try context.insert("Album", values: ["title": "First Light", "year": 2026])
        try newAlbum.setRelated(band, for: "band")
        let inserted = try await context.save()
        try album.set(2031, for: "year")
        let updated = try await context.save()
        print("1. The backend is down (500 to everything). Insert band \"Night Tide\" with album \"First Light\",")
        print("   then set album 2 (\(title)) to year 2031: two saves, pending (", terminator: "")
        print("\(inserted.pending.count + updated.pending.count) objects),")
        print("   new objects under temporary IDs \(band.objectID) and \(newAlbum.objectID).")
        await first.shutdown(cancelling: true)

        // Someone else changes album 2 meanwhile: the app's update is now based on an old version.
        _ = try backend.store.save(SaveChanges(updated: [Node(id: edited, attributes: ["price": 9.5])]))
        let second = try open()
        guard let outbox = second.handlers(of: (any SaveHolding).self).first else {
            throw StoreChainError(.invalidRequest, "the offline pipeline has no outbox")
        }
        let entries = try await outbox.entries()
        print("2. A new process opens the same pipeline: the outbox holds \(entries.count) save(s), ", terminator: "")
        print(entries.map { "#\($0.id) \($0.kind) (\($0.state.rawValue))" }.joined(separator: ", ") + ".")

        backend.setQuirks(.none)
        backend.resetStats()
        let events = second.events.subscribe()
        // The first read the backend answers shows the waiting saves, and starts the replay.
        let nightTide = try await second.fetch(
            FetchRequest(entity: "Album", predicate: try FetchPredicate("band.name == 'Night Tide'")))
        print(
            "3. The backend is back. The first read shows the app its own writes (albums of Night Tide: ",
            terminator: "")
        let titles =
            if case .objects(let nodes) = nightTide { nodes.map { $0[attribute: "title"].description } } else {
                [String]()
            }
        print("\(titles.joined(separator: ", "))) and starts the replay.")
        let left = try await second.sync()
        var permanentIDs: [ObjectID: ObjectID] = [:]
        var resolved: [ObjectID: ConflictPolicy] = [:]
        var iterator = events.makeAsyncIterator()
        // The inserts sent, the conflict settled, the update sent.
        for _ in 0..<3 {
            guard let event = await iterator.next() else { break }
            permanentIDs.merge(event.permanentIDs) { _, new in new }
            resolved.merge(event.outbox.resolved) { _, new in new }
        }
        let routes = backend.stats.requestsByRoute
        print("   Replayed, \(left) left. Permanent IDs: ", terminator: "")
        print(permanentIDs.map { "\($0.key) → \($0.value)" }.sorted().joined(separator: ", ") + ".")
        print(
            "   The backend received POST /v2/bands ×\(routes["POST /v2/bands"] ?? 0), "
                + "POST /v2/albums ×\(routes["POST /v2/albums"] ?? 0), "
                + "PATCH /v2/albums ×\(routes["PATCH /v2/albums"] ?? 0) "
                + "(repeats answered from Idempotency-Key: \(backend.stats.repeatedWrites)).")
        let stored = backend.store.node(for: edited)
        let year = stored?[attribute: "year"] ?? .null
        let price = stored?[attribute: "price"] ?? .null
        print(
            "   Album 2 had changed meanwhile (price 9.5): the PATCH based on the old version got 412, and the "
                + "conflict was settled by \(resolved[edited]?.description ?? "nothing"): year \(year), price \(price)."
        )
        await second.shutdown()
    }
}
