import Foundation
import Testing

/// A disk cache file the process may not write is bypassed with a warning: answers still come
/// from upstream, and the file is neither changed nor moved aside as if it were damaged.
///
/// Root may write any file, so when the tests run as root the second run is made as `nobody`
/// (through `setpriv`), which is what a read-only file means to an ordinary user.
@Suite struct ReadOnlyCacheTests {
    static let nobody: UInt32 = 65_534

    @Test func aReadOnlyCacheFileIsBypassedAndLeftAlone() async throws {
        let folder = URL(filePath: "/tmp").appending(path: "storechain-readonly-\(UUID())")
        try FileManager.default.createDirectory(at: folder.appending(path: "cache"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let music = CommandRunner.packageRoot.appending(path: "Examples/Music")
        for file in ["music.model.yml", "music.json"] {
            try FileManager.default.copyItem(at: music.appending(path: file), to: folder.appending(path: file))
        }
        let pipeline = folder.appending(path: "music.pipeline.yml")
        try """
        model: music.model.yml
        handlers:
          - disk-cache: { path: ./cache/music.sqlite, ttl: 1h }
        terminal:
          json-file: { path: music.json }
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let query = ["query", "--pipeline", pipeline.path, "--entity", "Band", "--sort", "name", "--format", "json"]

        let first = try await CommandRunner.run(query)
        #expect(first.status == 0, "\(first.stderr)")
        let cacheFile = folder.appending(path: "cache/music.sqlite")
        var launcher: [String] = []
        if getuid() == 0 {
            launcher = ["/usr/bin/setpriv", "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups"]
            for item in [folder.path]
                + (try FileManager.default.subpathsOfDirectory(atPath: folder.path)).map({
                    folder.appending(path: $0).path
                })
            {
                #expect(chown(item, Self.nobody, Self.nobody) == 0, "chown \(item)")
            }
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: cacheFile.path)
        let before = try Data(contentsOf: cacheFile)

        let second = try await CommandRunner.run(query, launcher: launcher)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == first.stdout, "the answer comes from upstream, unchanged")
        #expect(second.stderr.contains("cannot write \(cacheFile.path)"), "\(second.stderr)")
        #expect(second.stderr.contains("the file is read-only); caching on disk is off"), "\(second.stderr)")
        #expect(try Data(contentsOf: cacheFile) == before, "the file is not written")
        let cacheFolder = try FileManager.default.contentsOfDirectory(atPath: folder.appending(path: "cache").path)
        #expect(!cacheFolder.contains { $0.contains(".corrupt-") }, "nothing is moved aside: \(cacheFolder)")
    }
}
