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
                try await browse(ObjectContext(chain: chain, model: pipeline.model))
                await chain.shutdown()
                print("   (\(backend.stats.requests) requests to the backend)\n")
            }
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
            sortedBy: [FetchSortDescriptor("name")])
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
}
