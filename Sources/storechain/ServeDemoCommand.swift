import ArgumentParser
import Foundation
import StoreChainDemoBackend

/// `storechain serve-demo`: the demo backend on its own, until interrupted.
struct ServeDemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve-demo",
        abstract: "Run the demo music backend (v1, v2 and v3 APIs) on 127.0.0.1."
    )

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(help: "How many bands the generated catalog has.")
    var bands: Int = 200

    @Option(
        help:
            "Delay every GET (reads, the change feed, the event stream) by this many milliseconds; writes are not delayed."
    )
    var latency: Int = 0

    @Option(name: .customLong("rate-limit"), help: "Answer 429 with Retry-After above this many requests per second.")
    var rateLimit: Int?

    @Option(name: .customLong("fail-every"), help: "Answer every n-th request with a 500.")
    var failEvery: Int?

    @Option(name: .customLong("throttle-every"), help: "Answer every n-th request with a 429 and Retry-After: 0.")
    var throttleEvery: Int?

    @Flag(help: "Send ETag and answer If-None-Match with 304.")
    var etags = false

    @Option(name: .customLong("max-age"), help: "Send Cache-Control: max-age with this many seconds.")
    var maxAge: Int?

    @Option(
        help:
            "Change random records (an album's price, a track's title) this many times a second, so GET /v2/changes and /v2/events have something to say."
    )
    var churn: Double?

    func validate() throws {
        for (name, value) in [
            ("--latency", Optional(latency)), ("--rate-limit", rateLimit), ("--fail-every", failEvery),
            ("--throttle-every", throttleEvery), ("--max-age", maxAge),
        ] {
            let zeroAllowed = name == "--latency" || name == "--max-age"
            if let value, value < 0 || (value == 0 && !zeroAllowed) {
                throw ValidationError(
                    "\(name) \(value): expected \(zeroAllowed ? "zero or more" : "a positive number")")
            }
        }
        if let churn, !(churn > 0 && churn <= 1_000) {
            throw ValidationError("--churn \(churn): expected changes per second, more than 0 and at most 1000")
        }
    }

    func run() async throws {
        let quirks = DemoQuirks(
            latency: .milliseconds(latency), rateLimitPerSecond: rateLimit, failEvery: failEvery,
            throttleEvery: throttleEvery, etags: etags, maxAgeSeconds: maxAge)
        let backend = try DemoBackend(bands: bands, quirks: quirks)
        let bound = try await backend.start(port: port)
        // Written straight to the file descriptor, unbuffered: scripts and tests read the
        // address from a pipe while the server runs.
        let banner = """
            Demo backend on http://127.0.0.1:\(bound)
              v1: GET /v1/catalog
              v2: GET /v2/bands?page=&per_page=&sort=, /v2/bands/search?name=, /v2/bands/{id},
                  /v2/bands/{id}/albums, /v2/albums?cursor=, /v2/albums/{id}, /v2/tracks?ids=1,2,
                  /v2/tracks?album_id=1,2, /v2/tracks?page=, /v2/tracks/{id}; POST, PATCH, DELETE;
                  /v2/changes?since=&wait= (every change, long-polled),
                  /v2/events (every change as server-sent events; Last-Event-ID resumes)
              v3: GET /v3/bands, /v3/albums, /v3/tracks (?page=&per_page=), /v3/{bands,albums,tracks}/{id},
                  /v3/bands/{id}/albums, /v3/albums/{id}/tracks
              quirks: \(Self.describe(quirks))\(churn.map { "\n  churn: \($0) changes a second" } ?? "")
            Press Ctrl-C to stop.

            """
        FileHandle.standardOutput.write(Data(banner.utf8))
        let churning = churn.map { rate in Task { await backend.churn(perSecond: rate) } }
        defer { churning?.cancel() }
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))
        }
        await backend.stop()
    }

    static func describe(_ quirks: DemoQuirks) -> String {
        var parts: [String] = []
        if quirks.latency > .zero { parts.append("latency \(quirks.latency)") }
        if let limit = quirks.rateLimitPerSecond { parts.append("429 above \(limit)/s") }
        if let every = quirks.failEvery { parts.append("500 every \(every) requests") }
        if let every = quirks.throttleEvery { parts.append("429 every \(every) requests") }
        if quirks.etags { parts.append("ETags with 304") }
        if let age = quirks.maxAgeSeconds { parts.append("max-age=\(age)") }
        return parts.isEmpty ? "none (see serve-demo --help)" : parts.joined(separator: ", ")
    }
}
