import ArgumentParser
import Foundation
import StoreChain
import StoreChainPipeline
import StoreChainSQLite

/// `storechain outbox list|replay|discard|retry`: the saves a pipeline's outbox holds.
struct OutboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Show and manage the saves a pipeline's outbox holds until the backend takes them.",
        subcommands: [List.self, Replay.self, Discard.self, Retry.self]
    )

    /// The pipeline and its outbox.
    static func outbox(_ option: PipelineOption) throws -> (Pipeline, any SaveHolding) {
        let pipeline = try option.load()
        let outboxes = try option.handlers(
            of: (any SaveHolding).self, in: pipeline, named: "outbox", example: "{ path: outbox.sqlite }")
        guard outboxes.count == 1, let outbox = outboxes.first else {
            throw StoreChainError(
                .invalidRequest, "\(option.pipeline) has \(outboxes.count) outbox handlers",
                suggestion: "keep one outbox in a pipeline")
        }
        return (pipeline, outbox)
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every save the outbox holds, oldest first: ID, entities, kind, state, attempts, last error.")

        @OptionGroup var pipeline: PipelineOption

        @Option(help: "Output format: json or table.")
        var format: QueryCommand.Format = .table

        func run() async throws {
            try await Output.reportingFailure {
                let entries = try await OutboxCommand.outbox(pipeline).1.entries()
                let header = ["id", "entity", "kind", "state", "attempts", "last-error", "created"]
                let rows = entries.map { entry -> [Value] in
                    [
                        .integer(Int(entry.id)), .string(entry.changes.entities.sorted().joined(separator: ",")),
                        .string(entry.kind), .string(entry.state.rawValue), .integer(entry.attempts),
                        entry.lastError.map(Value.string) ?? .null,
                        .string(entry.created.formatted(.iso8601)),
                    ]
                }
                if format == .json {
                    print(
                        ResultFormatter.json(
                            rows.map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }, properties: header))
                } else {
                    print(entries.isEmpty ? "the outbox is empty" : ResultFormatter.table(header: header, rows: rows))
                }
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the pending saves now, in order; fails while some cannot be sent yet.")

        @OptionGroup var pipeline: PipelineOption

        func run() async throws {
            try await Output.reportingFailure {
                let (loaded, outbox) = try OutboxCommand.outbox(pipeline)
                let before = try await outbox.entries()
                let chain = loaded.makeChain()
                let remaining: Int
                do {
                    remaining = try await chain.sync()
                } catch {
                    await chain.shutdown()
                    throw error
                }
                await chain.shutdown()
                let after = try await outbox.entries()
                let failed = after.filter { $0.state == .failed }
                let newlyFailed = failed.count - before.filter { $0.state == .failed }.count
                let sent = before.filter { $0.state == .pending }.count - remaining - newlyFailed
                print("sent \(sent), still pending \(remaining), failed \(failed.count)")
                for entry in failed { Output.standardError("entry \(entry.id) failed: \(entry.lastError ?? "")") }
                if remaining > 0 {
                    let reason = after.first { $0.state == .pending }?.lastError ?? "the backend cannot be reached"
                    Output.standardError("error: \(remaining) save(s) could not be sent yet: \(reason)")
                    throw ExitCode.failure
                }
            }
        }
    }

    struct Discard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a save: it will never be sent.")

        @OptionGroup var pipeline: PipelineOption

        @Argument(help: "The entry's ID, as 'outbox list' shows it.")
        var id: Int64

        func run() async throws {
            try await Output.reportingFailure {
                try await OutboxCommand.outbox(pipeline).1.discard(id)
                print("discarded entry \(id)")
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mark a failed save pending again; 'outbox replay' sends it.")

        @OptionGroup var pipeline: PipelineOption

        @Argument(help: "The entry's ID, as 'outbox list' shows it.")
        var id: Int64

        func run() async throws {
            try await Output.reportingFailure {
                try await OutboxCommand.outbox(pipeline).1.retry(id)
                print("entry \(id) is pending again")
            }
        }
    }
}
