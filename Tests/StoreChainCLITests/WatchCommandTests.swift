import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import Testing

@Suite(.serialized) struct WatchCommandTests {
    /// `watch` prints the result, then the change another client makes, as it arrives through
    /// the live pipeline's change feed.
    @Test func printsTheResultThenEachChangeAsItArrives() async throws {
        let backend = try DemoBackend(bands: 5)
        let port = try await backend.start()
        defer { Task { await backend.stop() } }
        let folder = FileManager.default.temporaryDirectory.appending(path: "storechain-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        let file = folder.appending(path: "live.pipeline.yml")
        try DemoPipelines.v2Live.write(to: file, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = try CommandRunner.executable()
        process.arguments = [
            "watch", "--pipeline", file.path, "--entity", "Album", "--where", "id IN {3, 4}", "--sort", "id",
            "--updates", "1",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path,
        ]) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = Pipe()
        try process.run()
        let watchdog = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        defer { watchdog.cancel() }
        let reader = Reader(output.fileHandleForReading)
        let table = await reader.read(until: "\n\n")
        #expect(table.contains("title") && table.contains("---"), "\(table)")

        let remote = try RemoteResponder(
            model: backend.model, options: DemoRemoteOptions.v2(baseURL: try #require(backend.baseURL)))
        let context = ObjectContext(chain: Chain(handlers: [], terminal: remote), model: backend.model)
        try context.object(with: ObjectID(entity: "Album", key: .integer(4))).set("Watched", for: "title")
        _ = try await context.save()

        let rest = await reader.read(until: nil)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(rest.contains("~ Album 4  title: ") && rest.contains("→ Watched"), "\(rest)")
        #expect(!rest.contains("Album 3"), "an album that did not change is not printed: \(rest)")
    }
}

/// Reads a pipe off the concurrency pool's threads, up to a marker or to its end.
private final class Reader: Sendable {
    let handle: FileHandle
    private let buffer = Locked("")

    init(_ handle: FileHandle) { self.handle = handle }

    func read(until marker: String?) async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            Thread.detachNewThread { [self] in
                while true {
                    if let marker, let text = buffer.withLock({ $0.contains(marker) ? $0 : nil }) {
                        buffer.withLock { $0 = "" }
                        continuation.resume(returning: text)
                        return
                    }
                    let chunk = handle.availableData
                    if chunk.isEmpty {
                        let text = buffer.withLock { text in
                            defer { text = "" }
                            return text
                        }
                        continuation.resume(returning: text)
                        return
                    }
                    buffer.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
                }
            }
        }
    }
}
