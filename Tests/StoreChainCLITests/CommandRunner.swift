import Foundation
import Testing

/// Runs the built `storechain` executable and captures what it prints.
///
/// The child is waited for on a thread of its own, never on the concurrency pool: a test that
/// blocked a pool thread while its child talked to an in-process demo backend deadlocked CI on
/// two cores (both pool threads blocked, the backend's handlers never ran).
struct CommandRunner {
    struct Outcome: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The package root, where `Examples/` is.
    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// How long a child may run before it is terminated and the test fails.
    static let timeLimit: TimeInterval = 300

    /// The executable sits beside the test bundle in the build folder.
    static func executable(named name: String = "storechain") throws -> URL {
        let candidates = [Bundle.main.executableURL, URL(filePath: CommandLine.arguments[0])].compactMap { $0 }
        for candidate in candidates {
            var directory = candidate.deletingLastPathComponent()
            for _ in 0..<4 {
                let binary = directory.appending(path: name)
                if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "storechain executable beside \(candidates)"])
    }

    /// Runs the executable `name`; with a `launcher` (`setpriv --reuid=…`), runs it through that.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], executable name: String = "storechain",
        launcher: [String] = []
    ) async throws -> Outcome {
        let binary = try executable(named: name)
        let command =
            launcher.isEmpty
            ? (binary, arguments) : (URL(filePath: launcher[0]), launcher.dropFirst() + [binary.path] + arguments)
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result { try runBlocking(command.0, arguments: Array(command.1), environment: environment) })
            }
        }
    }

    private static func runBlocking(_ binary: URL, arguments: [String], environment: [String: String]) throws
        -> Outcome
    {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.currentDirectoryURL = packageRoot
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let watchdog = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: watchdog)
        // Read both pipes at once so neither can fill up and block the child.
        let errorReader = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: errorReader) {
            errData = error.fileHandleForReading.readDataToEndOfFile()
        }
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        errorReader.wait()
        process.waitUntilExit()
        watchdog.cancel()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
