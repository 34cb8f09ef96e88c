import ArgumentParser
import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainPipeline

/// `storechain query`: one fetch through a pipeline (or over a JSON data file), printed as JSON
/// or a table.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run one fetch request and print the result.",
        discussion: """
            Examples:
              storechain query --pipeline Examples/Bandcamp/v2.pipeline.yml \\
                --entity Album --sort -year --stats \\
                --where 'year >= 2000 AND band.name BEGINSWITH[c] "rue"'
              storechain query --model Examples/Music/music.model.yml \\
                --data Examples/Music/music.json --entity Band --count
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, table
    }

    @OptionGroup var fetch: FetchOptions

    @Option(help: "A pipeline file describing the chain to fetch through.")
    var pipeline: String?

    @OptionGroup var ignored: IgnoredTypes

    @Option(help: "The model file (YAML or JSON), with --data.")
    var model: String?

    @Option(help: "The JSON data file: {\"Entity\": [records…], …}, with --model.")
    var data: String?

    @Flag(help: "Print only the number of matching objects.")
    var count = false

    @Option(help: "Cache policy: use-cache, reload, cache-only, or stale-while-revalidate=DURATION (such as 1d).")
    var policy: String?

    @Option(help: "Output format: json or table.")
    var format: Format = .table

    @Flag(help: "Print upstream requests, bytes, who answered and the cache status to stderr.")
    var stats = false

    func validate() throws {
        guard (pipeline != nil) != (model != nil || data != nil) else {
            throw ValidationError("give either --pipeline FILE, or --model FILE with --data FILE")
        }
        if pipeline == nil, model == nil || data == nil {
            throw ValidationError("--model and --data go together")
        }
    }

    func run() async throws {
        try await Output.reportingFailure(predicateText: fetch.predicate) { try await execute() }
    }

    private func execute() async throws {
        var request = try fetch.request()
        if count { request.resultType = .count }
        if let policy { request.cachePolicy = try Self.policy(policy) }
        let chain: Chain
        let model: ObjectModel
        let subrequests = SubrequestCounter()
        if let pipeline {
            let loaded = try Pipeline.load(contentsOf: URL(filePath: pipeline), registry: ignored.registry)
            chain = Chain(handlers: [subrequests] + loaded.handlers, terminal: loaded.terminal)
            model = loaded.model
        } else if let modelPath = self.model, let data {
            model = try ModelFile.load(contentsOf: URL(filePath: modelPath))
            chain = Chain(
                handlers: [], terminal: try JSONFileStore(contentsOf: URL(filePath: data), model: model).store)
        } else {
            throw ValidationError("give either --pipeline FILE, or --model FILE with --data FILE")
        }
        var context = chain.makeContext()
        let progress = ProgressLine()
        if progress.isVisible { context[FetchProgressKey.self] = { progress.show($0) } }
        let started = ContinuousClock.now
        let response: StoreResponse
        do {
            response = try await chain.send(.fetch(request), context: context)
            progress.finish()
        } catch {
            progress.finish()
            await chain.shutdown()
            throw error
        }
        await chain.shutdown()
        let elapsed = ContinuousClock.now - started
        let formatter = ResultFormatter(entity: try model.requireEntity(fetch.entity))
        switch try response.fetchResult() {
        case .count(let number): print(number)
        case .objects(let nodes): print(format == .json ? formatter.json(nodes) : formatter.table(nodes))
        case .objectIDs(let ids): print(ids.map(\.description).joined(separator: "\n"))
        case .dictionaries(let rows):
            print(ResultFormatter.json(rows, properties: rows.first.map { Array($0.keys).sorted() } ?? []))
        }
        if stats {
            let info = response.info
            var line = "answered by \(info.answerer)"
            if let cache = info.cacheStatus { line += ", cache \(cache.rawValue)" }
            if info.isStale { line += ", stale" }
            if let pages = info.pagesRead { line += ", \(pages) page(s)" }
            if let traffic = chain.upstreamTraffic {
                line += ", upstream \(traffic.requests) request(s), \(traffic.bytesReceived) bytes received"
            }
            let (sent, fromCaches) = subrequests.totals
            if sent > 0 { line += ", \(sent) sub-request(s) (\(fromCaches) from caches)" }
            line += String(format: ", %.1f ms", elapsed / .milliseconds(1))
            Output.standardError("stats: " + line)
        }
    }

    /// `use-cache`, `reload`, `cache-only`, `stale-while-revalidate=1d`.
    static func policy(_ text: String) throws(StoreChainError) -> CachePolicy {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        switch parts.first {
        case "use-cache": return .useCache
        case "reload": return .reload
        case "cache-only": return .cacheOnly
        case "stale-while-revalidate":
            guard let maxStale = TimeSpan.parse(parts.count == 2 ? parts[1] : "1d") else {
                throw StoreChainError(
                    .invalidRequest, "'\(text)' has no valid duration", at: .init(path: "--policy"),
                    suggestion: "write stale-while-revalidate=1d (or 30s, 5m, 1h)")
            }
            return .staleWhileRevalidate(maxStale: maxStale)
        default:
            throw StoreChainError(
                .invalidRequest, "unknown cache policy '\(text)'", at: .init(path: "--policy"),
                suggestion: "use use-cache, reload, cache-only or stale-while-revalidate=DURATION")
        }
    }
}
