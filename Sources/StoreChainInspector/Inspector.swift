import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StoreChain
import StoreChainPipeline

/// A local web page that shows what a chain did and why: the pipeline, a query console with
/// each request's waterfall (sub-requests under the request they serve, who answered, every HTTP
/// exchange), the caches (clear one, forget an entity), the outbox (retry, discard), the rate
/// limiters, and the requests as they happen. It reads what the chain's tracing already produces
/// (`InspectorRecorder`); without an inspector nothing changes.
///
/// ```swift
/// let inspector = Inspector(pipeline: try Pipeline.load(contentsOf: url))
/// let chain = inspector.chain          // the app uses this chain
/// let port = try await inspector.serve(port: 7070)
/// ```
///
/// Safe by default: it listens on loopback unless `host` says otherwise, redacts secrets in the
/// pipeline it shows, and every action that changes data needs a POST with this run's token.
public final class Inspector: Sendable {
    /// The chain it shows.
    public let chain: Chain
    let recorder: InspectorRecorder
    let pipeline: Pipeline?
    /// What a POST must carry in `X-StoreChain-Token`: a new one every run, which only the page
    /// served from here can read.
    let token = UUID().uuidString
    private let server = Locked<(task: Task<Void, any Error>, group: ServiceGroup)?>(nil)

    /// Inspects a chain made with `recorder.tracing` (what another tracer records is not seen).
    public init(chain: Chain, recorder: InspectorRecorder) {
        self.chain = chain
        self.recorder = recorder
        self.pipeline = nil
    }

    /// Inspects a pipeline: makes its chain, traced into a recorder of its own, and shows the
    /// pipeline file's handlers with their options.
    public init(pipeline: Pipeline, logger: Logger = Logger(label: "storechain")) {
        let recorder = InspectorRecorder(redactsValues: pipeline.tracing.redactValues)
        self.recorder = recorder
        self.pipeline = pipeline
        chain = Chain(
            handlers: pipeline.handlers, terminal: pipeline.terminal, logger: logger, tracing: recorder.tracing)
    }

    /// Serves the page on `host` (loopback by default) and `port` (0 picks a free one) until
    /// `stop()`; returns the port.
    @discardableResult
    public func serve(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "storechain.inspector")
        logger.logLevel = .critical
        let application = Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(host, port: port), serverName: "StoreChainInspector"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = stream.makeAsyncIterator()
        guard let bound = await iterator.next(), bound > 0 else {
            task.cancel()
            _ = try? await task.value
            throw StoreChainError(
                .transport, "the inspector could not listen on \(host):\(port)",
                suggestion: "choose another port, or 0 for any free one")
        }
        server.withLock { $0 = (task, group) }
        return bound
    }

    /// Stops serving the page (the chain goes on).
    public func stop() async {
        guard
            let running = server.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        await running.group.triggerGracefulShutdown()
        _ = try? await running.task.value
    }
}
