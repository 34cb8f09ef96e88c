import ArgumentParser
import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainPipeline

/// `storechain explain`: how a pipeline would serve a fetch, without running it.
struct ExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show, without running it, how a pipeline would serve a fetch.",
        discussion: """
            Lists the handlers that see the request, the endpoint the planner picks, what is \
            pushed down to the backend, what runs in memory, the ways to read the related objects \
            it needs with their expected requests, and the pages it expects to read. Nothing is \
            sent to the backend; the pipeline's caches are asked how large the listings they \
            hold are.

            Example:
              storechain explain --pipeline Examples/Bandcamp/v2.pipeline.yml \\
                --entity Band --where 'name BEGINSWITH[c] "rue"'
            """
    )

    @OptionGroup var pipelineOption: PipelineOption
    @OptionGroup var fetch: FetchOptions

    @Flag(help: "Explain counting the matching objects instead of fetching them.")
    var count = false

    func run() async throws {
        try await Output.reportingFailure(predicateText: fetch.predicate) { print(try await explanation()) }
    }

    func explanation() async throws -> String {
        let pipeline = try pipelineOption.load()
        var request = try fetch.request()
        if count { request.resultType = .count }
        _ = try FetchPlan(request, model: pipeline.model)
        var lines = ["fetch \(request)", "", "handlers that see it:"]
        var pager: (any FetchPaging)?
        for (index, stage) in pipeline.stages.enumerated() {
            guard
                let handler = stage.handler.unscoped(as: (any StoreHandler).self, for: .fetch, entity: request.entity)
            else {
                lines.append("  \(index + 1). \(stage.type) — passed by (scoped to other requests)")
                continue
            }
            if pager == nil, let paging = handler as? any FetchPaging { pager = paging }
            lines.append("  \(index + 1). \(stage.type)")
        }
        lines.append("terminal: \(pipeline.terminalType)")
        guard let remote = pipeline.terminal as? any FetchExplaining else {
            lines.append("  answers the whole request in memory")
            return lines.joined(separator: "\n")
        }
        // The caches may know how large a listing is: they are asked, never the backend.
        let chain = pipeline.makeChain()
        let plan: FetchExplanation
        do {
            plan = try await remote.explain(request, context: chain.makeContext(cachePolicy: .cacheOnly))
            await chain.shutdown()
        } catch {
            await chain.shutdown()
            throw error
        }
        if !plan.narrowed.isEmpty {
            lines.append("  narrowed:")
            lines += plan.narrowed.map { "    \($0)" }
        }
        lines.append("  endpoint: \(plan.endpoint)")
        lines.append("  pushed down: " + (plan.pushed.isEmpty ? "nothing" : plan.pushed.joined(separator: " AND ")))
        lines.append("  in memory: " + (plan.inMemory.isEmpty ? "nothing" : plan.inMemory.joined(separator: "; ")))
        if !plan.follows.isEmpty { lines.append("  loads related: " + plan.follows.joined(separator: ", ")) }
        for read in plan.relatedReads {
            lines.append("  reads \(read.relationship), one of:")
            lines += read.options.map { "    \($0)" }
            lines.append("    chosen: \(read.choice)")
        }
        lines.append("  pages: " + Self.pages(plan, request: request, pager: pager))
        if !plan.rejected.isEmpty {
            lines.append("  endpoints not used:")
            lines += plan.rejected.map { "    \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    /// What the pages will be: the ones covering the window, in order until it is full, or all.
    /// A `Link` endpoint's page size is whatever its URL asks for, so none is stated for it; the
    /// others use the pager's size for the entity, else the endpoint's own.
    static func pages(_ plan: FetchExplanation, request: FetchRequest, pager: (any FetchPaging)?) -> String {
        guard let style = plan.paging else { return "one response (the endpoint does not page)" }
        let pageSize = style == .link ? nil : pager?.pageSize(for: request.entity) ?? plan.pageSize
        let size = pageSize.map { " of \($0)" } ?? ""
        if request.resultType == .count {
            guard plan.exact else { return "every page\(size) (the filter runs in memory, so every record is counted)" }
            return "the first page, when it states the total (X-Total-Count) or links the last one (then that "
                + "page too); else every page\(size) (\(style.rawValue))"
        }
        guard pager != nil else { return "every page\(size) (\(style.rawValue); no pagination handler)" }
        guard let limit = request.fetchLimit else { return "every page\(size) (\(style.rawValue); no limit)" }
        let end = request.fetchOffset + limit
        guard plan.exact else {
            return plan.inMemory.contains(where: { $0.hasPrefix("sort") })
                ? "every page\(size) (\(style.rawValue); the sort is done in memory)"
                : "pages\(size) in order until \(end) records match (\(style.rawValue); filtering in memory)"
        }
        guard let pageSize, pageSize > 0 else { return "pages in order until record \(end) (\(style.rawValue))" }
        switch style {
        case .pageNumber:
            let first = request.fetchOffset / pageSize
            let last = max(first, (end - 1) / pageSize)
            return "\(last - first + 1) page(s)\(size): pages \(first + 1)…\(last + 1) (page numbers)"
        case .offset:
            return "\((limit + pageSize - 1) / pageSize) page(s)\(size) from offset \(request.fetchOffset)"
        case .cursor, .link:
            return
                "\((end + pageSize - 1) / pageSize) page(s)\(size), followed in order from the first (\(style.rawValue))"
        }
    }
}
