import Tracing

/// How a chain traces its requests with swift-distributed-tracing.
///
/// Every request through the chain gets a span (`storechain.fetch`, `storechain.object-fault`,
/// …) with its entity, predicate, who answered, the cache status, pages read and exchanges with
/// the backend; sub-requests are its children. Handlers that do work add child spans
/// (`storechain.cache.read`, `storechain.pagination.page`, `storechain.batch`,
/// `storechain.rate-limit.wait`, `storechain.retry.attempt`), and the remote terminal a client
/// span per HTTP exchange, whose context it injects into the request's headers (`traceparent`
/// with an OpenTelemetry tracer). The app's own span, when there is one, is the parent.
///
/// ```swift
/// let chain = Chain(handlers: handlers, terminal: remote, tracing: ChainTracing(tracer: myTracer))
/// ```
public struct ChainTracing: Sendable {
    public var tracer: any Tracer
    /// Whether constants in the predicate attribute are replaced by `?` (the default: values
    /// a user typed may be personal data).
    public var redactsValues: Bool

    public init(tracer: any Tracer, redactsValues: Bool = true) {
        self.tracer = tracer
        self.redactsValues = redactsValues
    }

    /// Tracing with the tracer bootstrapped in `InstrumentationSystem`, or `nil` when none is.
    public static func bootstrapped(redactsValues: Bool = true) -> ChainTracing? {
        let tracer = InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : ChainTracing(tracer: tracer, redactsValues: redactsValues)
    }

    /// Runs `operation` for `request` in a span of its own.
    func trace(_ request: StoreRequest, _ operation: () async throws -> StoreResponse) async throws -> StoreResponse {
        let asked = request.unconditional
        return try await tracer.withSpan("storechain." + asked.kind.rawValue) { span in
            span.attributes["storechain.entity"] = asked.entities.sorted().joined(separator: ",")
            if case .revalidation = request { span.attributes["storechain.conditional"] = true }
            switch asked {
            case .fetch(let fetch), .page(let fetch, _):
                if let predicate = fetch.predicate {
                    span.attributes["storechain.predicate"] = predicate.format(redactingValues: redactsValues)
                }
            case .objectFault(let id), .relationshipFault(let id, _), .relationshipPage(let id, _, _):
                span.attributes["storechain.object"] = id.description
            default: break
            }
            if case .relationshipFault(_, let name) = asked { span.attributes["storechain.relationship"] = name }
            if case .page(_, let page) = asked { span.attributes["storechain.page"] = page.description }
            let response = try await operation()
            let info = response.info
            span.attributes["storechain.answered_by"] = info.answeredBy
            span.attributes["storechain.source"] = info.origin.rawValue
            if let status = info.cacheStatus { span.attributes["storechain.cache.status"] = status.rawValue }
            if info.isStale { span.attributes["storechain.stale"] = true }
            if let pages = info.pagesRead { span.attributes["storechain.pages"] = pages }
            span.attributes["storechain.exchanges"] = info.exchanges
            return response
        }
    }
}

extension RequestContext {
    /// Runs `operation` in a child span named `name` when the chain traces, with the span to add
    /// attributes to; otherwise runs it with `nil`, at no cost (the name is not even built).
    ///
    /// ```swift
    /// try await context.withSpan("myhandler.lookup") { span in
    ///     span?.attributes["myhandler.key"] = key
    ///     return try await lookup(key)
    /// }
    /// ```
    public func withSpan<T>(
        _ name: @autoclosure () -> String, ofKind kind: SpanKind = .internal,
        _ operation: ((any Span)?) async throws -> T
    ) async throws -> T {
        guard let tracing = services.tracing else { return try await operation(nil) }
        return try await tracing.tracer.withSpan(name(), ofKind: kind) { span in try await operation(span) }
    }

    /// The tracer, when the chain traces (for injecting its context into outgoing requests).
    public var tracer: (any Tracer)? { services.tracing?.tracer }
}
