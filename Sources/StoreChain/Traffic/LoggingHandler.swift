import Foundation
import Logging

/// Logs one line per request: kind, entity and a short form of the predicate, who answered and
/// from where, the cache status, pages read and the duration, and for a sub-request the request
/// it served (`… for fetch Track where album.year > 1990`); failures at warning with their
/// description, except a cache-only request that nothing cached, which is an answer (logged at
/// the handler's level as `not cached`). Values of secrets (the `Authorization` header, bearer tokens, and any header or
/// query parameter named in `secrets`) are replaced by `REDACTED`.
///
/// ```swift
/// Chain(terminal: remote) { LoggingHandler(level: .info, secrets: ["api_key"]) }
/// ```
public struct LoggingHandler: StoreHandler {
    public let name = "logging"
    /// The level of the line logged per request.
    public let level: Logger.Level
    /// Lower-cased names of headers, query parameters and metadata keys whose values are secret.
    public let secrets: Set<String>

    /// Logs one line per request at `level`; values of `secrets` never appear in a line.
    public init(level: Logger.Level = .info, secrets: Set<String> = []) {
        self.level = level
        self.secrets = Set(secrets.map { $0.lowercased() }).union(["authorization", "proxy-authorization"])
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        let start = context.clock.now
        do {
            let response = try await next(request, context)
            let info = response.info
            var line = "\(summary(of: request)) → \(info.answerer)"
            line +=
                " cache=\(info.cacheStatus?.rawValue ?? (info.origin == .memory || info.origin == .disk ? "hit" : "none"))"
            if info.isStale { line += " stale" }
            if let pages = info.pagesRead { line += " pages=\(pages)" }
            if info.exchanges > 0 { line += " exchanges=\(info.exchanges)" }
            if let batch = info.batchSize { line += " batch=\(batch)" }
            if let error = info.error { line += " error=\(redact(error.description))" }
            line += " \(milliseconds(since: start, context))ms"
            if let parent = context.lineage.last { line += " for \(summary(of: parent))" }
            context.logger.log(level: level, "\(line)")
            return response
        } catch let error as StoreChainError
            where error.code == .notCached && context.effectiveCachePolicy(for: request) == .cacheOnly
        {
            // A cache-only request that nothing cached answers is an answer ("not there"), not
            // a failure: planners probe the caches this way.
            var line = "\(summary(of: request)) → not cached (cache-only) \(milliseconds(since: start, context))ms"
            if let parent = context.lineage.last { line += " for \(summary(of: parent))" }
            context.logger.log(level: level, "\(line)")
            throw error
        } catch is CancellationError {
            // The caller stopped waiting (a chain shutting down ends its change feed's long
            // poll this way): not a failure of the request.
            context.logger.log(
                level: level, "\(summary(of: request)) cancelled after \(milliseconds(since: start, context))ms")
            throw CancellationError()
        } catch {
            context.logger.warning(
                "\(summary(of: request)) failed after \(milliseconds(since: start, context))ms: \(redact("\(error)"))")
            throw error
        }
    }

    /// `fetch Album where year >= 2000 sort=-year limit=10`, `object-fault Band/1`.
    func summary(of request: StoreRequest) -> String {
        switch request {
        case .fetch(let fetch): return "fetch " + describe(fetch)
        case .page(let fetch, let page): return "page \(page) of " + describe(fetch)
        case .objectFault(let id): return "object-fault \(id)"
        case .relationshipFault(let id, let name): return "relationship-fault \(id).\(name)"
        case .relationshipPage(let id, let name, let page): return "page \(page) of relationship \(id).\(name)"
        case .save(let changes): return "save \(changes.entities.sorted().joined(separator: ",")): \(changes)"
        case .revalidation(let request, _): return summary(of: request) + " if changed"
        case .changes(let request): return "\(request)"
        }
    }

    private func describe(_ fetch: FetchRequest) -> String {
        var text = fetch.entity
        if let predicate = fetch.predicate {
            let format = redact(predicate.format)
            text += " where " + (format.count > 120 ? format.prefix(117) + "..." : format)
        }
        if !fetch.sortDescriptors.isEmpty {
            text += " sort=" + fetch.sortDescriptors.map(\.description).joined(separator: ",")
        }
        if fetch.fetchOffset > 0 { text += " offset=\(fetch.fetchOffset)" }
        if let limit = fetch.fetchLimit { text += " limit=\(limit)" }
        return text
    }

    /// The text with secret values replaced: `Bearer …`, `name=value` and `name: value` for
    /// every secret name.
    func redact(_ text: String) -> String {
        var result = text.replacing(/(?i)(bearer\s+)[A-Za-z0-9._~+\/=-]+/) { "\($0.output.1)REDACTED" }
        for secret in secrets {
            let name = NSRegularExpression.escapedPattern(for: secret)
            guard let pattern = try? Regex("(?i)(\(name)\\s*[=:]\\s*)[^&\\s,;\"']+") else { continue }
            result = result.replacing(pattern) { match in
                "\(match.output[1].substring ?? "")REDACTED"
            }
        }
        return result
    }

    private func milliseconds(since start: Date, _ context: RequestContext) -> String {
        String(format: "%.1f", context.clock.now.timeIntervalSince(start) * 1_000)
    }
}

extension LoggingHandler: Decodable {
    private enum CodingKeys: String, CodingKey {
        case level, secrets
    }

    /// A log level as files write it, with a suggestion when misspelt.
    private struct Level: Decodable {
        let level: Logger.Level

        init(from decoder: any Decoder) throws {
            level = try ConfigurationDecoding.enumCase(Logger.Level.self, from: decoder, what: "log level")
        }
    }

    /// Reads `{ level: info, secrets: [api_key] }`; a key left out keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = LoggingHandler()
        self.init(
            level: try container.decodeIfPresent(Level.self, forKey: .level)?.level ?? defaults.level,
            secrets: try container.decodeIfPresent([String].self, forKey: .secrets).map(Set.init) ?? defaults.secrets)
    }
}
