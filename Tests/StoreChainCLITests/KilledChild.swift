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

    static func run(_ binary: URL, arguments: [String], killAfter delay: Duration) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(binary, arguments: arguments, delay: delay) })
            }
        }
    }

    private static func runBlocking(_ binary: URL, arguments: [String], delay: Duration) throws -> Outcome {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
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
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
            if !armed, printed.starts(with: Data("ready\n".utf8)) {
                armed = true
                let nanoseconds =
                    delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
                    kill(pid, SIGKILL)
                }
            }
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
