import Foundation
import StoreChain
import StoreChainPipeline
import Synchronization

/// The Palettes example: an offset/limit paginated list behind a disk cache with
/// stale-while-revalidate. It starts a small palette API on a loopback port, then pages through
/// the most liked palettes the way a list screen does.
@main
struct PalettesExample {
    static func main() async throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let requests = Counter()
        let (port, server) = try await PalettesServer().start { requests.add() }
        defer { server.cancel() }
        var environment = ProcessInfo.processInfo.environment
        environment["PALETTES_URL"] = "http://127.0.0.1:\(port)"
        let pipeline = try Pipeline.load(
            contentsOf: folder.appending(path: "palettes.pipeline.yml"), environment: environment)
        let chain = pipeline.makeChain()
        let context = ObjectContext(chain: chain, model: pipeline.model)
        for screen in [0, 1, 2, 1, 0] {
            let before = requests.value
            let palettes = try await context.fetch(
                FetchRequest(
                    entity: "Palette", sortDescriptors: [FetchSortDescriptor("likes", ascending: false)],
                    fetchLimit: 20, fetchOffset: screen * 20))
            var titles: [String] = []
            for palette in palettes.prefix(3) {
                titles.append("\(try await palette.value("title")) (\(try await palette.value("likes")) likes)")
            }
            print(
                "screen \(screen + 1): \(palettes.count) palettes, \(requests.value - before) request(s) — "
                    + titles.joined(separator: ", ") + ", …")
        }
        await chain.shutdown()
        print("\(requests.value) requests in all; the screens seen before came from the caches.")
    }
}

/// Requests the palette API has answered.
final class Counter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func add() { count.withLock { $0 += 1 } }
}
