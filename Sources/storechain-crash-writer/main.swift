// A child process for the crash-safety harness (`StoreChainCLITests/CrashSafetyTests`,
// `Scripts/reliability.sh`): it writes through a disk cache over a SQLite store until it is
// killed, printing one line per committed write so the parent knows what must survive.
//
//     storechain-crash-writer STORE_PATH CACHE_PATH PREFIX
//
// Each round saves a band and an album of it (a save touching two entities and an inverse),
// then fetches the band by name (a query the cache stores), and only then prints
// `committed BAND_KEY ALBUM_KEY NAME`.
import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting

@main
struct CrashWriter {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: storechain-crash-writer STORE_PATH CACHE_PATH PREFIX\n".utf8))
            exit(2)
        }
        let (storePath, cachePath, prefix) = (arguments[1], arguments[2], arguments[3])
        do {
            let model = try MusicFixture.model()
            let store = try SQLiteStore(path: storePath, model: model)
            let chain = Chain(handlers: [DiskCache(model: model, path: cachePath)], terminal: store)
            let context = ObjectContext(chain: chain, model: model)
            announce("ready")
            for round in 1... {
                let name = "\(prefix)-\(round)"
                let band = try context.insert("Band", values: ["name": .string(name)])
                let album = try context.insert("Album", values: ["title": .string("\(name) album")])
                try album.setRelated(band, for: "band")
                try await context.save()
                let found = try await chain.fetch(
                    FetchRequest(entity: "Band", predicate: try FetchPredicate("name == %@", name)))
                guard case .objects(let nodes) = found, nodes.count == 1, let bandKey = band.objectID.key,
                    let albumKey = album.objectID.key
                else {
                    throw StoreChainError(.saveFailed, "round \(round): the saved band \(name) was not found")
                }
                announce("committed \(bandKey) \(albumKey) \(name)")
            }
        } catch {
            FileHandle.standardError.write(Data("storechain-crash-writer: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Writes a line straight to the pipe: nothing reported may sit in a buffer when the kill comes.
    static func announce(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
