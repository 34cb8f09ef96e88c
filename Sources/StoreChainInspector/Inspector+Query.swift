import Foundation
import InMemoryTracing
import StoreChain
import Tracing

extension Inspector {
    /// A fetch typed into the page's console.
    struct QueryInput: Codable {
        var entity: String
        var predicate: String?
        var sort: String?
        var limit: Int?
        var offset: Int?
        /// `use-cache` (the default), `reload` or `cache-only`.
        var policy: String?
    }

    /// What the fetch answered, and everything the chain did for it.
    struct QueryAnswer: Codable {
        var columns: [String] = []
        var rows: [[String]] = []
        var count: Int?
        var cacheStatus: String?
        var answeredBy: String?
        var milliseconds: Double = 0
        /// The request's spans: the console's root, the chain's requests, handlers' work, HTTP.
        var spans: [RecordedSpan] = []
        /// How the terminal would serve it (the planner's reasons), when it can tell.
        var explanation: [String] = []
        var error: String?
        var suggestion: String?
    }

    /// Runs `input` through the chain in a trace of its own.
    func run(_ input: QueryInput) async -> QueryAnswer {
        var answer = QueryAnswer()
        let request: FetchRequest
        let policy: CachePolicy
        do {
            request = try Self.request(input)
            policy = try Self.policy(input.policy)
        } catch {
            answer.error = error.message
            answer.suggestion = error.suggestion
            return answer
        }
        answer.explanation = await explanation(of: request)
        let started = ContinuousClock.now
        let trace = Locked<String?>(nil)
        var recorded = RecordedRequest(.fetch(request), redactingValues: recorder.redactsValues)
        do {
            let response = try await recorder.inConsole {
                try await recorder.tracer.withSpan("inspector.query") { span in
                    trace.withLock { $0 = span.traceID }
                    span.attributes["storechain.entity"] = request.entity
                    return try await chain.send(.fetch(request), context: chain.makeContext(cachePolicy: policy))
                }
            }
            answer.cacheStatus = response.info.cacheStatus?.rawValue
            answer.answeredBy = response.info.answerer
            switch try response.fetchResult() {
            case .objects(let nodes): (answer.columns, answer.rows) = Self.table(nodes)
            case .objectIDs(let ids):
                answer.columns = ["id"]
                answer.rows = ids.map { [$0.description] }
            case .count(let count): answer.count = count
            case .dictionaries(let rows):
                answer.columns = Array(Set(rows.flatMap(\.keys))).sorted()
                answer.rows = rows.map { row in answer.columns.map { row[$0]?.description ?? "" } }
            }
        } catch let error as StoreChainError {
            answer.error = error.message
            answer.suggestion = error.suggestion
        } catch {
            answer.error = "\(error)"
        }
        let elapsed = (ContinuousClock.now - started).components
        answer.milliseconds = Double(elapsed.seconds) * 1_000 + Double(elapsed.attoseconds) / 1e15
        if let id = trace.withLock({ $0 }) { answer.spans = recorder.takeTrace(id) }
        let root = answer.spans.first { $0.name == "inspector.query" }
        recorded.start = root?.start ?? 0
        recorded.end = root?.end ?? 0
        recorded.answeredBy = answer.answeredBy
        recorded.cacheStatus = answer.cacheStatus
        recorded.exchanges = answer.spans.filter { $0.kind == "client" }.count
        recorded.failed = answer.error != nil
        recorded.spans = answer.spans
        recorder.record(recorded)
        return answer
    }

    static func request(_ input: QueryInput) throws(StoreChainError) -> FetchRequest {
        var request = FetchRequest(entity: input.entity, fetchLimit: input.limit, fetchOffset: input.offset ?? 0)
        if let text = input.predicate?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            do {
                request.predicate = try FetchPredicate(format: text)
            } catch {
                throw error.located(.init(path: "where"))
            }
        }
        if let sort = input.sort?.trimmingCharacters(in: .whitespaces), !sort.isEmpty {
            request.sortDescriptors = try sort.split(separator: ",").map { text throws(StoreChainError) in
                try FetchSortDescriptor(parsing: text.trimmingCharacters(in: .whitespaces))
            }
        }
        return request
    }

    static func policy(_ name: String?) throws(StoreChainError) -> CachePolicy {
        switch name ?? "use-cache" {
        case "use-cache", "": .useCache
        case "reload": .reload
        case "cache-only": .cacheOnly
        case let other:
            throw StoreChainError(
                .invalidRequest, "unknown cache policy '\(other)'", at: .init(path: "policy"),
                suggestion: "use use-cache, reload or cache-only")
        }
    }

    /// Objects as a table: the key first, then every attribute any of them has, then their
    /// to-one relationships.
    static func table(_ nodes: [Node]) -> (columns: [String], rows: [[String]]) {
        // The key's own attribute is the first column already.
        let attributes = Set(nodes.flatMap(\.attributes.keys)).sorted().filter { name in
            !nodes.allSatisfy { $0.attributes[name] == $0.id.key }
        }
        let toOne = Set(
            nodes.flatMap { node in
                node.relationships.compactMap { name, value in if case .toOne = value { name } else { nil } }
            }
        ).sorted()
        let rows = nodes.map { node in
            [node.id.key?.description ?? node.id.description]
                + attributes.map { node.attributes[$0]?.description ?? "" }
                + toOne.map { name in
                    if case .toOne(let id?)? = node.relationships[name] { id.description } else { "" }
                }
        }
        return (["id"] + attributes + toOne, rows)
    }

    /// The planner's account of how the terminal would serve `request`, as lines.
    private func explanation(of request: FetchRequest) async -> [String] {
        guard let explaining = chain.terminal as? any FetchExplaining,
            let explained = try? await explaining.explain(request, context: chain.makeContext())
        else { return [] }
        var lines = ["endpoint: \(explained.endpoint)"]
        if !explained.pushed.isEmpty {
            lines.append("pushed to the backend: " + explained.pushed.joined(separator: ", "))
        }
        for step in explained.inMemory { lines.append("in memory: \(step)") }
        if let paging = explained.paging {
            lines.append("paging: \(paging.rawValue)" + (explained.pageSize.map { ", \($0) a page" } ?? ""))
        }
        for read in explained.relatedReads { lines.append("\(read.relationship): \(read.choice)") }
        for rejected in explained.rejected { lines.append("not chosen: \(rejected)") }
        return lines
    }
}
