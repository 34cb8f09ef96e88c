import Foundation
import StoreChain

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Folders for a test's files in the system's temporary directory, removed with
/// everything in them when the process exits (a full `swift test` left some 3,000 `storechain-*`
/// folders behind each run). A process that crashes leaves its folders, to look into.
///
/// ```swift
/// let path = TemporaryFolder.make("storechain-cache").appending(path: "cache.sqlite").path
/// ```
public enum TemporaryFolder {
    /// A new folder, `<temporary directory>/<prefix>-<UUID>`, made now; removed at exit.
    ///
    /// - Throws: when the folder cannot be made.
    public static func create(_ prefix: String) throws -> URL {
        let url = make(prefix)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A new path, `<temporary directory>/<prefix>-<UUID>`, not made yet (what stores a file
    /// there usually makes it); removed at exit.
    public static func make(_ prefix: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "\(prefix)-\(UUID().uuidString)")
        let first = registered.withLock { state in
            state.folders.append(url)
            defer { state.hooked = true }
            return !state.hooked
        }
        if first { atexit { removeRegisteredFolders() } }
        return url
    }
}

/// The folders `TemporaryFolder.make` handed out, and whether the exit hook is installed.
private let registered = Locked<(folders: [URL], hooked: Bool)>(([], false))

private func removeRegisteredFolders() {
    let folders = registered.withLock { state in
        defer { state.folders = [] }
        return state.folders
    }
    for folder in folders { try? FileManager.default.removeItem(at: folder) }
}
