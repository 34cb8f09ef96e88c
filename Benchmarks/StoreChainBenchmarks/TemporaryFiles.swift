import Foundation

/// The folder every file the benchmarks make goes in: one per benchmark process, removed when
/// the process exits (package-benchmark runs the executable many times; folders left by each run
/// added up to more than a thousand in the system's temporary folder).
let benchmarkFolder: URL = {
    let folder = FileManager.default.temporaryDirectory.appending(path: "storechain-bench-\(UUID())")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: benchmarkFolder) }
    return folder
}()

/// A path in a new folder inside `benchmarkFolder`.
func temporaryPath(_ name: String) -> String {
    temporaryFolder().appending(path: name).path
}

/// A new folder inside `benchmarkFolder`.
func temporaryFolder() -> URL {
    let folder = benchmarkFolder.appending(path: UUID().uuidString)
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}
