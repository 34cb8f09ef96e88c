import ArgumentParser
import Foundation
import StoreChain
import StoreChainPipeline
import StoreChainSQLite

/// `storechain cache stats|clear`: the disk caches of a pipeline.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or erase a pipeline's disk caches.",
        subcommands: [Stats.self, Clear.self]
    )

    /// The disk caches a pipeline's handlers hold (scoped or not).
    static func diskCaches(_ option: PipelineOption) throws -> [any CacheInspecting] {
        try option.handlers(
            of: (any CacheInspecting).self, in: option.load(), named: "disk-cache",
            example: "{ path: cache/app.sqlite }")
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Size, objects per entity, queries, complete collections and expired entries.")

        @OptionGroup var pipeline: PipelineOption

        func run() async throws {
            do {
                for cache in try CacheCommand.diskCaches(pipeline) {
                    let stats = try await cache.statistics()
                    let objects = stats.objectsByEntity.values.reduce(0, +)
                    print("\(cache.location)")
                    print("  file: \(stats.storedBytes) bytes (payloads \(stats.payloadBytes) bytes)")
                    print("  objects: \(objects)")
                    for (entity, count) in stats.objectsByEntity.sorted(by: { $0.key < $1.key }) {
                        print("    \(entity): \(count)")
                    }
                    print("  queries: \(stats.queries)")
                    print(
                        "  complete collections: "
                            + (stats.collections.isEmpty ? "none" : stats.collections.joined(separator: ", ")))
                    print("  expired entries: \(stats.expired)")
                }
            } catch {
                Output.report(error)
                throw ExitCode.failure
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Erase every entry and shrink the file.")

        @OptionGroup var pipeline: PipelineOption

        func run() async throws {
            do {
                for cache in try CacheCommand.diskCaches(pipeline) {
                    try await cache.clear()
                    let stats = try await cache.statistics()
                    print("cleared \(cache.location): \(stats.storedBytes) bytes left")
                }
            } catch {
                Output.report(error)
                throw ExitCode.failure
            }
        }
    }
}
