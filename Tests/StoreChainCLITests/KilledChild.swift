import Foundation

/// Runs an executable until it prints `ready`, then kills it with SIGKILL after a delay, and
/// returns every line it printed before dying: the crash-safety harness's child.
///
/// Like `CommandRunner`, the child is watched from a thread of its own, never from the
/// concurrency pool.
enum KilledChild {
    struct Outcome: Sendable {
        /// Lines printed before the kill, in order.
        let lines: [String]
        /// Whether the kill ended it (rather than the child exiting by itself).
        let wasKilled: Bool
        let stderr: String
    }

    /// Kills the child `delay` after it prints `ready`, or after it starts when `waitsForReady`
    /// is false (a command that prints nothing first, killed at any moment of its run).
    static func run(
        _ binary: URL, arguments: [String], environment: [String: String] = [:], killAfter delay: Duration,
        waitsForReady: Bool = true
    ) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try runBlocking(
                            binary, arguments: arguments, environment: environment, delay: delay,
                            waitsForReady: waitsForReady)
                    })
            }
        }
    }

    private static func runBlocking(
        _ binary: URL, arguments: [String], environment: [String: String], delay: Duration, waitsForReady: Bool
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let pid = process.processIdentifier
        // A child that never gets ready is killed too, so the harness cannot hang.
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        let errorReader = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: errorReader) {
            errData = error.fileHandleForReading.readDataToEndOfFile()
        }
        var printed = Data()
        var armed = false
        func arm() {
            armed = true
            let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
                kill(pid, SIGKILL)
            }
        }
        if !waitsForReady { arm() }
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
            if !armed, printed.starts(with: Data("ready\n".utf8)) { arm() }
        }
        errorReader.wait()
        process.waitUntilExit()
        watchdog.cancel()
        let text = String(decoding: printed, as: UTF8.self)
        // Only whole lines count: a line cut off by the kill was not reported.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()
        return Outcome(
            lines: lines,
            wasKilled: process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
