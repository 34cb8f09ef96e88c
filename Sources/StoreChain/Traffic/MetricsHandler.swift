import CoreMetrics
import Foundation

/// Records swift-metrics counters and timers for what passes it: requests by kind and by who
/// answered (`origin`), durations, cache results (hit, miss, stale, …), errors by code; and,
/// through the request context, what the handlers and terminal below it do: retries,
/// rate-limit waits, and each exchange with the backend (`upstream_requests_total` by HTTP
/// method, counted where it is made, so a page is counted once however it was sent).
///
/// ```swift
/// Chain(terminal: remote) { MetricsHandler(); MemoryCache(model: model); RetryHandler() }
/// ```
public struct MetricsHandler: StoreHandler {
    public let name = "metrics"
    /// Where the counts and timers go.
    public let metrics: StoreMetrics

    /// Metrics labelled `<prefix>_…`, made by `factory` (the bootstrapped one by default).
    public init(prefix: String = "storechain", factory: (any MetricsFactory)? = nil) {
        metrics = StoreMetrics(prefix: prefix, factory: factory ?? MetricsSystem.factory)
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        var context = context
        context[StoreMetricsKey.self] = metrics
        let start = context.clock.now
        let kind = request.kind.rawValue
        do {
            let response = try await next(request, context)
            let info = response.info
            metrics.count("requests_total", ["kind": kind, "origin": info.origin.rawValue])
            metrics.time("request_duration", ["kind": kind], since: start, now: context.clock.now)
            if let status = info.cacheStatus { metrics.count("cache_results_total", ["result": status.rawValue]) }
            return response
        } catch {
            let code = (error as? StoreChainError)?.code.name ?? (error is CancellationError ? "cancelled" : "other")
            metrics.count("errors_total", ["kind": kind, "code": code])
            metrics.time("request_duration", ["kind": kind], since: start, now: context.clock.now)
            throw error
        }
    }
}

/// The metrics one `MetricsHandler` records, for the handlers below it to add to.
public final class StoreMetrics: Sendable {
    /// What every metric's name starts with (`storechain`).
    public let prefix: String
    private let factory: any MetricsFactory

    /// Metrics named from `prefix`, made by `factory` (swift-metrics' backend of the app).
    public init(prefix: String, factory: any MetricsFactory) {
        self.prefix = prefix
        self.factory = factory
    }

    /// Adds to the counter `<prefix>_<name>` with these dimensions.
    public func count(_ name: String, _ dimensions: [String: String] = [:], by amount: Int = 1) {
        Counter(label: "\(prefix)_\(name)", dimensions: dimensions.sorted { $0.key < $1.key }, factory: factory)
            .increment(by: amount)
    }

    /// Records the time from `start` to `now` in the timer `<prefix>_<name>`.
    public func time(_ name: String, _ dimensions: [String: String] = [:], since start: Date, now: Date) {
        CoreMetrics.Timer(
            label: "\(prefix)_\(name)", dimensions: dimensions.sorted { $0.key < $1.key }, factory: factory
        )
        // Dates hold about 0.1 µs, so durations are whole microseconds.
        .recordNanoseconds(Int64((max(0, now.timeIntervalSince(start)) * 1e6).rounded()) * 1_000)
    }
}

/// Where `MetricsHandler` puts its `StoreMetrics` for the handlers below it.
public enum StoreMetricsKey: RequestContextKey {
    /// The metrics of the chain.
    public typealias Value = StoreMetrics
}

extension MetricsHandler: Decodable {
    private enum CodingKeys: String, CodingKey {
        case prefix
    }

    /// Reads `{ prefix: storechain }`, with the bootstrapped metrics factory; a key left out
    /// keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let prefix = try container.decodeIfPresent(String.self, forKey: .prefix) {
            self.init(prefix: prefix)
        } else {
            self.init()
        }
    }
}
