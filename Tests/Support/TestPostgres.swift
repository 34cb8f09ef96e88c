import Foundation
import Synchronization

/// The PostgreSQL server this package's tests use: `STORECHAIN_POSTGRES_URL` when it is set (CI
/// starts a cluster and sets it), otherwise a throwaway cluster started on first use and stopped
/// when the test process ends. Tests never skip for want of a server: if none can be started,
/// `url()` throws and says why.
public enum TestPostgres {
    private static let shared = Mutex<Result<TestPostgresCluster, TestPostgresError>?>(nil)

    /// `postgres://user:password@127.0.0.1:port/database`.
    public static func url() throws -> String {
        if let url = ProcessInfo.processInfo.environment["STORECHAIN_POSTGRES_URL"], !url.isEmpty { return url }
        return try shared.withLock { shared in
            let cluster =
                shared
                ?? Result { try TestPostgresCluster.start() }.mapError {
                    $0 as? TestPostgresError ?? TestPostgresError("\($0)")
                }
            shared = cluster
            return try cluster.get().url
        }
    }

    /// A schema name no other test uses.
    public static func freshSchema() -> String {
        "t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}

/// A throwaway PostgreSQL cluster of one's own (`Scripts/postgres.sh`), for tests that stop and
/// start the server. It is removed with `remove()` or when the test process ends.
public final class TestPostgresCluster: Sendable {
    /// `postgres://user:password@127.0.0.1:port/database`.
    public let url: String
    /// The cluster's folder.
    public let directory: String

    private init(url: String, directory: String) {
        self.url = url
        self.directory = directory
    }

    /// Makes and starts a cluster on a free loopback port.
    public static func start() throws -> TestPostgresCluster {
        let printed = try script(["start", "--stop-with", String(ProcessInfo.processInfo.processIdentifier)])
        var exported: [String: String] = [:]
        for line in printed.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { exported[String(pair[0])] = String(pair[1]) }
        }
        guard let url = exported["STORECHAIN_POSTGRES_URL"], let directory = exported["STORECHAIN_POSTGRES_DIR"] else {
            throw TestPostgresError("Scripts/postgres.sh printed no URL: \(printed)")
        }
        return TestPostgresCluster(url: url, directory: directory)
    }

    /// Stops the server (a fast shutdown: open connections are closed); the data stays.
    public func stopServer() throws { _ = try Self.script(["stop-server", directory]) }

    /// Starts the stopped server again on the same port.
    public func startServer() throws { _ = try Self.script(["start-server", directory]) }

    /// Stops the server and deletes the cluster.
    public func remove() throws { _ = try Self.script(["stop", directory]) }

    /// Runs the script and waits for it. It is reaped with `waitpid`: Foundation's
    /// `waitUntilExit` can miss the exit of a script that leaves a background process behind
    /// (`--stop-with`), and wait forever on a zombie.
    private static func script(_ arguments: [String]) throws -> String {
        let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Scripts/postgres.sh")
        let process = Process()
        process.executableURL = URL(filePath: "/bin/bash")
        process.arguments = [script.path] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw TestPostgresError("cannot run \(script.path): \(error)")
        }
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        var status: Int32 = 0
        let reaped = waitpid(process.processIdentifier, &status, 0)
        if reaped != process.processIdentifier { process.waitUntilExit() }  // Foundation reaped it first.
        let succeeded = reaped == process.processIdentifier ? status == 0 : process.terminationStatus == 0
        guard succeeded else {
            throw TestPostgresError(
                "no PostgreSQL server for the tests: `\(script.path) \(arguments.joined(separator: " "))` failed: \(complaint)"
            )
        }
        return printed
    }
}

/// Why the tests have no PostgreSQL server.
public struct TestPostgresError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
