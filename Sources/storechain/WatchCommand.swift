import ArgumentParser
import Foundation
import StoreChain
import StoreChainPipeline

/// `storechain watch`: a fetch's current result, then each change to it as it arrives (like
/// `kubectl get -w`), until interrupted.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a fetch's result, then each change to it as it arrives.",
        discussion: """
            Changes made elsewhere arrive through the pipeline's change-feed handler;
            without one, only cache expiry and this process's own saves change the result.
            Each change is a line: + joined, - left, ~ changed (with the values).

            Example:
              storechain serve-demo --churn 2 &
              storechain watch --pipeline live.pipeline.yml --entity Album \\
                --where 'price > 15' --sort -price
            """
    )

    @OptionGroup var pipelineOption: PipelineOption
    @OptionGroup var fetch: FetchOptions

    @Option(help: "Stop after this many changes (for scripts); without it, run until interrupted.")
    var updates: Int?

    func validate() throws {
        if let updates, updates < 1 { throw ValidationError("--updates \(updates): expected a positive number") }
    }

    func run() async throws {
        try await Output.reportingFailure(predicateText: fetch.predicate) { try await execute() }
    }

    private func execute() async throws {
        let request = try fetch.request()
        let pipeline = try pipelineOption.load()
        let entity = try pipeline.model.requireEntity(request.entity)
        if pipeline.handlers.handlers(of: (any ChangeSource).self).isEmpty {
            Output.standardError(
                "note: \(pipelineOption.pipeline) has no change-feed handler: changes made elsewhere show only once the caches' answers expire and something refetches"
            )
        }
        let chain = pipeline.makeChain()
        let context = ObjectContext(chain: chain, model: pipeline.model)
        let formatter = ResultFormatter(entity: entity)
        var shown: [ObjectID: [String: Value]]?
        var order: [ObjectID] = []
        var printed = 0
        do {
            for try await objects in context.observe(request) {
                var rows: [ObjectID: [String: Value]] = [:]
                for object in objects { rows[object.objectID] = try await object.loadValues() }
                let ids = objects.map(\.objectID)
                if let before = shown {
                    let lines = Self.changes(from: before, order: order, to: rows, ids, entity: entity)
                    guard !lines.isEmpty else { continue }
                    let stamp = Date().formatted(.iso8601.time(includingFractionalSeconds: false))
                    write(lines.map { "\(stamp)  \($0)" }.joined(separator: "\n") + "\n")
                    printed += 1
                } else {
                    let nodes = ids.compactMap { id in rows[id].map { Node(id: id, attributes: AttributeValues($0)) } }
                    write(formatter.table(nodes) + "\n\n")
                }
                shown = rows
                order = ids
                if let updates, printed >= updates { break }
            }
        } catch {
            await chain.shutdown()
            throw error
        }
        await chain.shutdown()
    }

    /// Unbuffered, so a reader of a pipe sees each change as it arrives.
    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// `+ Album 9 {…}` for each object that joined, `- Album 7` for each that left, `~ Album 5
    /// title: "Old" → "New"` for each that stayed with other values; then `moved` when only the
    /// order changed.
    static func changes(
        from before: [ObjectID: [String: Value]], order: [ObjectID], to after: [ObjectID: [String: Value]],
        _ ids: [ObjectID], entity: EntityDescription
    ) -> [String] {
        func name(_ id: ObjectID) -> String { "\(id.entity) \(id.key?.description ?? id.description)" }
        var lines: [String] = []
        for id in ids {
            guard let values = after[id] else { continue }
            guard let old = before[id] else {
                let shown = entity.attributes.compactMap { attribute in
                    values[attribute.name].flatMap { $0.isNull ? nil : "\(attribute.name): \($0)" }
                }
                lines.append("+ \(name(id))  \(shown.joined(separator: ", "))")
                continue
            }
            let changed = entity.attributes.compactMap { attribute -> String? in
                let (was, now) = (old[attribute.name] ?? .null, values[attribute.name] ?? .null)
                return was == now ? nil : "\(attribute.name): \(was) → \(now)"
            }
            if !changed.isEmpty { lines.append("~ \(name(id))  \(changed.joined(separator: ", "))") }
        }
        for id in order where after[id] == nil { lines.append("- \(name(id))") }
        if lines.isEmpty && order != ids { lines.append("order changed: \(ids.map(name).joined(separator: ", "))") }
        return lines
    }
}
