import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainPipeline

/// The Bandcamp example: the same app code against two API generations of a music catalog,
/// each described by a pipeline file. It starts the demo backend on a loopback port first.
@main
struct BandcampExample {
    static func main() async throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let backend = try DemoBackend(bands: 20)
        let port = try await backend.start()
        var environment = ProcessInfo.processInfo.environment
        environment["STORECHAIN_DEMO_URL"] = "http://127.0.0.1:\(port)"
        do {
            for file in ["v1.pipeline.yml", "v2.pipeline.yml"] {
                let pipeline = try Pipeline.load(contentsOf: folder.appending(path: file), environment: environment)
                backend.resetStats()
                let chain = pipeline.makeChain()
                print("== \(file)")
                let context = ObjectContext(chain: chain, model: pipeline.model)
                try await browse(context)
                if file == "v2.pipeline.yml" { try await record(context) }
                await chain.shutdown()
                print("   (\(backend.stats.requests) requests to the backend)\n")
            }
            print("== live.pipeline.yml")
            try await follow(
                Pipeline.load(contentsOf: folder.appending(path: "live.pipeline.yml"), environment: environment))
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    /// The app: search bands by name, walk the first band's discography and its newest album's
    /// tracks through relationship faults. `Band`, `Album` and `Track` are generated from
    /// `music.model.yml` by the StoreChainModelPlugin, so a mistyped name does not compile.
    static func browse(_ context: ObjectContext) async throws {
        let bands = try await Band.fetch(
            context, where: Band.Keys.name.beginsWith("the", options: .caseInsensitive),
            sortedBy: [.name])
        var names: [String] = []
        for band in bands { names.append(try await band.name) }
        print("   bands beginning with \"the\": \(names)")
        guard let band = bands.first else { return }
        var albums: [(album: Album, year: Int)] = []
        for album in try await band.albums { albums.append((album, try await album.year ?? 0)) }
        albums.sort { $0.year < $1.year }
        print("   \(try await band.name) has \(albums.count) albums")
        guard let newest = albums.last?.album else { return }
        print("   \(try await newest.title) (\(try await newest.year ?? 0)):")
        for track in try await newest.tracks.prefix(5) {
            print("     \(try await track.number). \(try await track.title)")
        }
    }

    /// Writing through the generated types: a typed insert and an assignment, one save, then a
    /// count and a sort written with Foundation's `#Predicate` and `SortDescriptor` that see the
    /// new album, read without a trip (`loaded`).
    static func record(_ context: ObjectContext) async throws {
        guard let band = try await Band.fetch(context, sortedBy: [.name], limit: 1).first,
            let name = band.loaded?.name
        else { return }
        let album = try Album.insert(into: context, title: "Live at the Loopback", band: band)
        try await album.update { $0.year = 2026 }
        try await context.save()
        print("   saved \(album.loaded?.title ?? "?") as \(album.objectID)")
        let ofBand = #Predicate<Album.Fields> { $0.band.name == name }
        let count = try await Album.count(context, where: ofBand)
        let newest = try await Album.fetch(
            context, where: ofBand, sortBy: [SortDescriptor(\.year, order: .reverse)], limit: 1)
        print("   \(name) now has \(count) albums, the newest \(newest.first?.loaded?.title ?? "none")")
    }

    /// Live updates: one chain observes a band's albums; another (as another process would)
    /// renames one of them and saves; the observer prints the new titles as soon as the change
    /// feed (`GET /v2/changes`, long-polled by the pipeline's `change-feed` handler) brings them.
    static func follow(_ pipeline: Pipeline) async throws {
        let (watching, writing) = (pipeline.makeChain(), pipeline.makeChain())
        let reader = ObjectContext(chain: watching, model: pipeline.model)
        guard let band = try await Band.fetch(reader, sortedBy: [.name], limit: 1).first,
            let name = band.loaded?.name
        else { return }
        var albums = try Album.observe(
            reader, where: #Predicate { $0.band.name == name }, sortBy: [SortDescriptor(\.title)]
        ).makeAsyncIterator()
        let before = try await albums.next() ?? []
        print("   \(name): \(before.compactMap { $0.loaded?.title })")
        let writer = ObjectContext(chain: writing, model: pipeline.model)
        guard let first = before.first, let renamed = Album(writer.object(with: first.objectID)) else { return }
        try await renamed.update { $0.title = "Renamed Elsewhere" }
        try await writer.save()
        let after = try await albums.next() ?? []
        print("   another client renamed one; the observer now sees \(after.compactMap { $0.loaded?.title })")
        await writing.shutdown()
        await watching.shutdown()
    }
}
