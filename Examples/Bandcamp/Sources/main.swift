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
    /// tracks through relationship faults.
    static func browse(_ context: ObjectContext) async throws {
        let bands = try await context.fetch(
            FetchRequest(
                entity: "Band", predicate: try FetchPredicate("name BEGINSWITH[c] %@", "the"),
                sortDescriptors: [FetchSortDescriptor("name")]))
        print("   bands beginning with \"the\": \(try await bands.asyncMap { try await $0.value("name") })")
        guard let band = bands.first else { return }
        var albums = try await band.relatedObjects("albums")
        albums = try await albums.sortedByYear()
        print("   \(try await band.value("name")) has \(albums.count) albums")
        guard let newest = albums.last else { return }
        let tracks = try await newest.relatedObjects("tracks")
        print("   \(try await newest.value("title")) (\(try await newest.value("year"))):")
        for track in tracks.prefix(5) {
            print("     \(try await track.value("number")). \(try await track.value("title"))")
        }
    }
}

extension Array where Element == ManagedObject {
    fileprivate func asyncMap<T>(_ transform: (ManagedObject) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }

    fileprivate func sortedByYear() async throws -> [ManagedObject] {
        var years: [(ManagedObject, Int)] = []
        for album in self {
            if case .integer(let year) = try await album.value("year") {
                years.append((album, year))
            } else {
                years.append((album, 0))
            }
        }
        return years.sorted { $0.1 < $1.1 }.map(\.0)
    }
}
