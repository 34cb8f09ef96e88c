import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import StoreChain
import StoreChainPipeline

/// A real HTTP server with a deterministic music catalog, in two API generations:
///
/// - **v1**, the terrible backend: `GET /v1/catalog` dumps everything.
/// - **v2**, the improved one: paged lists (page numbers with `Link` headers for bands and
///   tracks, opaque cursors for albums), search by name, get by key, batch get of tracks,
///   nested `/v2/bands/{id}/albums`, a sort parameter, and POST / PATCH / DELETE.
///
/// It listens on loopback, on an ephemeral port unless told otherwise.
///
/// ```swift
/// let backend = try DemoBackend()
/// let port = try await backend.start()
/// // … http://127.0.0.1:\(port)/v2/bands …
/// await backend.stop()
/// ```
public final class DemoBackend: Sendable {
    public let model: ObjectModel
    /// The catalog the backend serves (and changes on POST / PATCH / DELETE).
    public let store: InMemoryStore
    let quirks: Locked<DemoQuirks>
    let counters = Watched(Stats())
    /// The first answer to each write sent with an `Idempotency-Key` header, by key.
    let idempotentAnswers = Locked<[String: WriteAnswer]>([:])
    /// Every change any client made, for `GET /v2/changes`.
    let changeLog = DemoChangeLog()
    private let server = Locked<Server?>(nil)

    /// A running server: its task, the service group that runs it (to stop it gracefully), its port.
    private struct Server {
        let task: Task<Void, any Error>
        let group: ServiceGroup
        let port: Int
    }

    /// What the backend has served.
    public struct Stats: Sendable, Hashable {
        public var requests = 0
        public var bytesSent = 0
        /// Requests by path prefix (`/v1/catalog`, `/v2/bands`, …).
        public var requestsByRoute: [String: Int] = [:]
        /// Requests answered 429 by the rate-limit quirk.
        public var rateLimited = 0
        /// Requests answered 500 by the failure quirk.
        public var failed = 0
        /// Conditional requests answered 304 Not Modified (no body).
        public var notModified = 0
        /// Writes repeated with an `Idempotency-Key` already seen: answered as the first time,
        /// and not applied again.
        public var repeatedWrites = 0
        /// Event streams open past the point where they fixed their position: a change made from
        /// then on is sent on each of them.
        public var eventStreamsFollowing = 0
        /// The most requests counted in any one second of the wall clock (from a whole second to
        /// the next): what a backend's own per-second rate limit would see.
        public var busiestSecond = 0
        /// When the first and the last request counted arrived (wall clock).
        public var firstRequestAt: Date?
        public var lastRequestAt: Date?
        var currentSecond = 0
        var currentSecondCount = 0
        var windowStart = Date.distantPast
        var windowCount = 0

        mutating func countInItsSecond(_ now: Date) {
            if firstRequestAt == nil { firstRequestAt = now }
            lastRequestAt = now
            let second = Int(now.timeIntervalSince1970.rounded(.down))
            if second != currentSecond {
                currentSecond = second
                currentSecondCount = 0
            }
            currentSecondCount += 1
            busiestSecond = max(busiestSecond, currentSecondCount)
        }
    }

    /// A backend over the generated catalog (`DemoCatalog(bands:)`).
    public init(bands: Int = 200, quirks: DemoQuirks = .none) throws {
        let model = try ModelFile.parse(DemoCatalogModel.text, source: "music.model.yml")
        self.model = model
        let dataset = try RecordLoader(model: model, source: "demo catalog").load(DemoCatalog(bands: bands).records())
        store = InMemoryStore(model: model, dataset: dataset)
        self.quirks = Locked(quirks)
    }

    /// What a write answered: its status and body.
    struct WriteAnswer: Sendable {
        var status: Int
        var text: String
    }

    /// Applies a save to the catalog and records it for the change feed (as a write through the
    /// API would; tests change the data as another client this way).
    @discardableResult
    package func save(_ changes: SaveChanges) throws(StoreChainError) -> SaveResult {
        let result = try store.save(changes)
        changeLog.record(changes, result)
        return result
    }

    /// Changes the quirks while running.
    public func setQuirks(_ quirks: DemoQuirks) {
        self.quirks.withLock { $0 = quirks }
    }

    public var stats: Stats {
        counters.withLock { $0 }
    }

    /// Returns once `condition` holds for the stats, woken by each request counted (for tests;
    /// fails with `timed-out`, naming `what`, after a minute).
    package func waitForStats(_ what: String, until condition: @escaping @Sendable (Stats) -> Bool) async throws {
        try await counters.wait(for: what, until: condition)
    }

    public func resetStats() {
        counters.withLock { $0 = Stats() }
    }

    /// The port it listens on, once started.
    public var port: Int? {
        server.withLock { $0?.port }
    }

    /// `http://127.0.0.1:PORT`, once started.
    public var baseURL: URL? {
        port.flatMap { URL(string: "http://127.0.0.1:\($0)") }
    }

    /// Starts listening on 127.0.0.1 (`port` 0 picks a free port) and returns the port.
    @discardableResult
    public func start(port: Int = 0) async throws -> Int {
        changeLog.reopen()
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "storechain.demo-backend")
        // Cancelling the server task to stop it logs a shutdown error; nothing else is worth noise.
        logger.logLevel = .critical
        let application = Application(
            router: makeRouter(),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "StoreChainDemo"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = stream.makeAsyncIterator()
        guard let bound = await iterator.next(), bound > 0 else {
            task.cancel()
            _ = try? await task.value
            throw StoreChainError(
                .transport, "the demo backend could not listen on port \(port)",
                suggestion: "choose another port, or 0 for any free one")
        }
        server.withLock { $0 = Server(task: task, group: group, port: bound) }
        return bound
    }

    /// Stops listening and waits until the server is down: gracefully (requests under way are
    /// answered; long polls for changes end at once), and by cancelling the server after five
    /// seconds if a request is still running then. (Cancelling at once could trap in NIO when a
    /// connection had been accepted but not yet handed over: "Deinited NIOAsyncWriter without
    /// calling finish()", swift-nio issue 3481.)
    public func stop() async {
        guard
            let running = server.withLock({ state -> Server? in
                defer { state = nil }
                return state
            })
        else { return }
        changeLog.close()
        await running.group.triggerGracefulShutdown()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(5))
            running.task.cancel()
        }
        _ = try? await running.task.value
        watchdog.cancel()
    }

    /// Counts a request and decides on quirks: the response to send instead, if any.
    func admit(_ route: String) -> (status: Int, retryAfter: Int?)? {
        let quirks = self.quirks.withLock { $0 }
        return counters.withLock { stats in
            stats.requests += 1
            stats.requestsByRoute[route, default: 0] += 1
            // One reading of the clock for the per-second count and the rate window alike.
            let now = Date()
            stats.countInItsSecond(now)
            if let limit = quirks.rateLimitPerSecond {
                if now.timeIntervalSince(stats.windowStart) >= 1 {
                    stats.windowStart = now
                    stats.windowCount = 0
                }
                stats.windowCount += 1
                if stats.windowCount > limit {
                    stats.rateLimited += 1
                    return (429, 1)
                }
            }
            if let every = quirks.throttleEvery, every > 0, stats.requests % every == 0 {
                stats.rateLimited += 1
                return (429, 0)
            }
            if let every = quirks.failEvery, every > 0, stats.requests % every == 0 {
                stats.failed += 1
                return (500, nil)
            }
            return nil
        }
    }

    func countBytes(_ count: Int) {
        counters.withLock { $0.bytesSent += count }
    }
}
