import Foundation
import Logging
import StoreChain
import StoreChainModelFile
import Tracing

/// A chain described by a pipeline file: its model, its handlers in order, and its terminal.
///
/// ```yaml
/// model: music.model.yml
/// handlers:
///   - logging: { level: info }
///   - memory-cache: { max-objects: 10000, ttl: 5m }
///   - disk-cache: { path: cache/music.sqlite, ttl: 1h, stale-while-revalidate: 1d, max-size: 200MB }
///   - pagination: { page-size: 50 }
///   - rate-limit: { rate: 10/s, burst: 20 }
///   - retry: { attempts: 4 }
///   - batching: { entities: [Track], max-batch: 100 }
///     when: { kinds: [object-fault] }
/// terminal:
///   remote:
///     base-url: http://127.0.0.1:8080/v2
///     auth: { bearer: "${MUSIC_TOKEN}" }
///     entities: { … }
/// ```
///
/// Everything is checked before anything runs, and every problem is reported at once with
/// file, line, key path and a suggestion (see `Docs/Pipelines.md`).
public struct Pipeline: Sendable {
    /// One handler of the file, with where it was written.
    public struct Stage: Sendable {
        /// The handler type name (`memory-cache`).
        public let type: String
        /// The handler made from it.
        public let handler: any StoreHandler
        /// The line of the file it is on.
        public let line: Int?
    }

    /// The file it was read from.
    public let source: String
    /// The model the file names.
    public let model: ObjectModel
    /// The handlers, in order, with where each is written.
    public let stages: [Stage]
    /// The terminal type name (`remote`).
    public let terminalType: String
    /// The terminal made from the file.
    public let terminal: any StoreResponder

    /// The file's `tracing:` options.
    public let tracing: TracingOptions

    /// The handlers, in order.
    public var handlers: [any StoreHandler] { stages.map(\.handler) }

    /// A chain of the pipeline's handlers and terminal. Chains made from one pipeline share
    /// its handlers (and so their caches).
    ///
    /// - Parameters:
    ///   - clock: The time the chain's handlers read.
    ///   - logger: The logger requests use.
    ///   - tracer: The tracer for the chain's spans; by default the one bootstrapped in
    ///     `InstrumentationSystem`. The file's `tracing: { enabled: false }` turns tracing off.
    public func makeChain(
        clock: any StoreClock = SystemClock(), logger: Logger = Logger(label: "storechain"),
        tracer: (any Tracer)? = nil
    ) -> Chain {
        Chain(
            handlers: handlers, terminal: terminal, clock: clock, logger: logger, tracing: tracing.chainTracing(tracer))
    }

    /// Reads and checks a pipeline file (YAML or JSON); paths in it are relative to its folder.
    ///
    /// - Throws: `ValidationFailure` listing every problem found.
    public static func load(
        contentsOf url: URL, registry: HandlerRegistry = .standard,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ValidationFailure) -> Pipeline {
        try load(contentsOf: url, registry: registry, environment: environment, validatesOnly: false)
    }

    /// Checks a pipeline file without opening the files and connections it names (cache files,
    /// for one); returns every problem found, none when it is valid.
    public static func validate(
        contentsOf url: URL, registry: HandlerRegistry = .standard,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [StoreChainError] {
        do {
            _ = try load(contentsOf: url, registry: registry, environment: environment, validatesOnly: true)
            return []
        } catch {
            return error.errors
        }
    }

    private static func load(
        contentsOf url: URL, registry: HandlerRegistry, environment: [String: String], validatesOnly: Bool
    ) throws(ValidationFailure) -> Pipeline {
        let text: String
        do {
            text = try YAMLDocument.text(at: url, what: "the pipeline file")
        } catch {
            throw ValidationFailure([error])
        }
        return try parse(
            text, source: url.relativePath, directory: url.deletingLastPathComponent(), registry: registry,
            environment: environment, validatesOnly: validatesOnly)
    }

    /// Parses pipeline file text; `source` names it in errors and `directory` anchors its
    /// relative paths.
    public static func parse(
        _ text: String, source: String, directory: URL, registry: HandlerRegistry = .standard,
        environment: [String: String] = ProcessInfo.processInfo.environment, validatesOnly: Bool = false
    ) throws(ValidationFailure) -> Pipeline {
        let document: YAMLDocument
        do {
            document = try YAMLDocument(text: text, source: source)
        } catch {
            throw ValidationFailure([error])
        }
        func read(validatesOnly: Bool) throws(ValidationFailure) -> Pipeline {
            var reader = PipelineReader(
                document: document, registry: registry, directory: directory, environment: environment,
                validatesOnly: validatesOnly)
            guard let pipeline = reader.read(), reader.problems.isEmpty else {
                throw ValidationFailure(reader.problems)
            }
            return pipeline
        }
        // A file with a mistake anywhere opens no cache or outbox file: it is checked whole first.
        let checked = try read(validatesOnly: true)
        return validatesOnly ? checked : try read(validatesOnly: false)
    }
}
