import Foundation
import Testing

/// Runs the built `storechain` executable and captures what it prints.
struct CommandRunner {
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The package root, where `Examples/` is.
    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

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

    static func run(_ arguments: [String], environment: [String: String] = [:], executable name: String = "storechain")
        throws -> Outcome
    {
        let process = Process()
        process.executableURL = try executable(named: name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.currentDirectoryURL = packageRoot
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes before waiting so a large output cannot fill a pipe and block.
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
