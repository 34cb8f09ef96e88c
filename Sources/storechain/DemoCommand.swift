import ArgumentParser
import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainSQLite

/// `storechain demo`: a short tour of expressive queries over the bundled music catalog.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Tour StoreChain's queries over a bundled music catalog."
    )

    @Option(help: "How many bands the generated catalog has.")
    var bands: Int = 200

    func run() async throws {
        do {
            let store = try tour()
            try await objectGraphTour(store)
            var backendTour = DemoBackendTour(bands: bands)
            try await backendTour.run()
            try await DemoOfflineWritesTour(bands: bands).run()
            print("\nTry your own:")
            print(
                "  swift run storechain query --model Examples/Music/music.model.yml --data Examples/Music/music.json \\"
            )
            print("    --entity Album --where 'ANY tracks.title CONTAINS[cd] \"deja\"' --format json")
        } catch {
            Output.report(error)
            throw ExitCode.failure
        }
    }

    private func tour() throws -> InMemoryStore {
        let model = try ModelFile.parse(DemoCatalogModel.text, source: "music.model.yml")
        let dataset = try RecordLoader(model: model, source: "demo catalog").load(DemoCatalog(bands: bands).records())
        let store = InMemoryStore(model: model, dataset: dataset)
        let counts = ["Band", "Album", "Track"].map { dataset.nodes(of: $0).count }
        print("StoreChain demo: a music catalog of \(counts[0]) bands, \(counts[1]) albums and \(counts[2]) tracks.")
        print("Every answer below is one FetchRequest: entity, predicate, sort, limit, offset, result type.\n")

        var step = 0
        func show(_ title: String, _ request: FetchRequest, columns: [String]? = nil) throws {
            step += 1
            print("\(step). \(title)")
            var line = "   fetch \(request.entity)"
            if let predicate = request.predicate { line += " where \(predicate.format)" }
            if !request.sortDescriptors.isEmpty {
                line += " sort " + request.sortDescriptors.map(\.description).joined(separator: ",")
            }
            if request.fetchOffset > 0 { line += " offset \(request.fetchOffset)" }
            if let limit = request.fetchLimit { line += " limit \(limit)" }
            print(line)
            switch try store.fetch(request) {
            case .count(let number): print("   → \(number)")
            case .objects(let nodes):
                let formatter = ResultFormatter(entity: try model.requireEntity(request.entity))
                print(indent(formatter.table(nodes)))
            case .dictionaries(let rows):
                let header = columns ?? []
                print(
                    indent(
                        ResultFormatter.table(header: header, rows: rows.map { row in header.map { row[$0] ?? .null } })
                    ))
            case .objectIDs(let ids): print("   → " + ids.map(\.description).joined(separator: ", "))
            }
            print()
        }

        try show(
            "Bands whose name begins with \"rue\", ignoring case",
            FetchRequest(entity: "Band", predicate: FetchPredicate("name BEGINSWITH[c] %@", "rue")))
        try show(
            "The newest albums of Rue Royale: a key path through a to-one relationship",
            FetchRequest(
                entity: "Album", predicate: FetchPredicate("band.name == %@", "Rue Royale"),
                sortDescriptors: [FetchSortDescriptor("year", ascending: false)], fetchLimit: 3))
        try show(
            "Bands with ten albums, by name: an aggregate over a to-many relationship",
            FetchRequest(
                entity: "Band", predicate: FetchPredicate("albums.@count == 10"),
                sortDescriptors: [FetchSortDescriptor("name", caseInsensitive: true)], fetchLimit: 5))
        try show(
            "Cheapest albums with a track longer than seven minutes: ANY over a to-many relationship",
            FetchRequest(
                entity: "Album", predicate: FetchPredicate("ANY tracks.seconds > %d AND price != nil", 415),
                sortDescriptors: [FetchSortDescriptor("price"), FetchSortDescriptor("title")], fetchLimit: 5))
        let echo = Key<String>("name")
        try show(
            "Bands whose name contains \"echos\", ignoring accents and case: built in Swift",
            FetchRequest(
                entity: "Band",
                predicate: echo.contains("echos", options: [.caseInsensitive, .diacriticInsensitive]), fetchLimit: 4))
        try show(
            "How many folk tracks are there? A count, no objects loaded",
            FetchRequest(entity: "Track", predicate: FetchPredicate("genre ==[c] 'FOLK'"), resultType: .count))
        try show(
            "Page 2 of the albums from the nineties (offset 5, limit 5)",
            FetchRequest(
                entity: "Album", predicate: FetchPredicate("year BETWEEN {1990, 1999}"),
                sortDescriptors: [FetchSortDescriptor("year"), FetchSortDescriptor("title")], fetchLimit: 5,
                fetchOffset: 5))
        try show(
            "Just the properties asked for: album title, year and band name",
            FetchRequest(
                entity: "Album", predicate: FetchPredicate("title LIKE[c] '*summer*' AND year < 1985"),
                sortDescriptors: [FetchSortDescriptor("year")], fetchLimit: 4,
                resultType: .dictionaries(["title", "year", "band.name"])),
            columns: ["title", "year", "band.name"])
        return store
    }

    /// The same store behind a chain, used through an `ObjectContext`: faults, prefetching and a save.
    private func objectGraphTour(_ store: InMemoryStore) async throws {
        let counter = RequestCounter()
        let chain = Chain(terminal: store) { counter }
        print("Now the object graph: an ObjectContext over a chain whose first handler counts requests.\n")
        var request = FetchRequest(entity: "Band", predicate: try FetchPredicate("name == 'Rue Royale'"))

        let plain = ObjectContext(chain: chain, model: store.model)
        let tracks = try await trackCount(of: plain.fetch(request))
        let faulting = counter.take()
        let total = faulting.map(\.count).reduce(0, +)
        print("9. Walk Rue Royale's albums and tracks, faulting as we go: \(tracks) tracks, \(total) requests")
        for (kind, count) in faulting { print("   \(count) × \(kind)") }

        request.relationshipKeyPathsForPrefetching = ["albums", "albums.tracks"]
        let prefetching = ObjectContext(chain: chain, model: store.model)
        let prefetched = try await trackCount(of: prefetching.fetch(request))
        let requests = counter.take().map(\.count).reduce(0, +)
        print("\n10. The same walk with albums and tracks prefetched: \(prefetched) tracks, \(requests) request(s)")

        let band = try await prefetching.fetch(request)[0]
        let album = try prefetching.insert("Album", values: ["title": "Live at the Demo", "year": 2026])
        try album.setRelated(band, for: "band")
        let temporary = album.objectID
        try await prefetching.save()
        let albums = try await band.relatedObjects("albums").count
        print(
            "\n11. Insert an album and save: \(temporary) became \(album.objectID); the band now has \(albums) albums")
        await chain.shutdown()
    }

    private func trackCount(of bands: [ManagedObject]) async throws -> Int {
        var count = 0
        for band in bands {
            for album in try await band.relatedObjects("albums") {
                for track in try await album.relatedObjects("tracks") where try await track.value("seconds") != .null {
                    count += 1
                }
            }
        }
        return count
    }

    private func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "   " + $0 }.joined(separator: "\n")
    }
}
