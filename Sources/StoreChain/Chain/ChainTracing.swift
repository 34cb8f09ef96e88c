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
    /// The tracer spans are started with.
    public var tracer: any Tracer
    /// Whether constants in the predicate attribute are replaced by `?` (the default: values
    /// a user typed may be personal data).
    public var redactsValues: Bool
    /// Which requests are traced in full; `nil` (the default): every one. A request sent to
    /// serve another (a sub-request) is traced when the one it serves is.
    package var selection: (any TraceSelection)?

    /// Traces every request with `tracer`; `redactsValues` keeps predicate values and secrets out of
    /// the spans' attributes.
    public init(tracer: any Tracer, redactsValues: Bool = true) {
        self.tracer = tracer
        self.redactsValues = redactsValues
    }

    /// Tracing that traces in full only what `selection` chooses (the inspector's recorder).
    package init(tracer: any Tracer, redactsValues: Bool = true, selection: (any TraceSelection)?) {
        self.init(tracer: tracer, redactsValues: redactsValues)
        self.selection = selection
    }

    /// Tracing with the tracer bootstrapped in `InstrumentationSystem`, or `nil` when none is.
    public static func bootstrapped(redactsValues: Bool = true) -> ChainTracing? {
        let tracer = InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : ChainTracing(tracer: tracer, redactsValues: redactsValues)
    }

    /// The chain's entry: sends each request on to `next` in a span of its own, or (when
    /// `selection` leaves a request from the app untraced) untraced, telling the selection what
    /// it did. A sub-request is traced when the request it serves is.
    func entry(before next: NextResponder) -> NextResponder {
        guard let selection else {
            return NextResponder { request, context in try await traced(request, context: context, next: next) }
        }
        return NextResponder { request, context in
            guard context.lineage.isEmpty else {
                if context.isTraced { return try await traced(request, context: context, next: next) }
                return try await next(request, context)
            }
            if selection.tracesInFull(request) { return try await traced(request, context: context, next: next) }
            return try await Self.summarized(request, context: context, next: next, selection: selection)
        }
    }

    /// Sends `request` on untraced and tells `selection` what the chain did for it. Inlined
    /// into `Chain.send` (the app's call), so that a request the selection leaves untraced costs
    /// no async call more than without tracing: every memory-cache hit takes this path while an
    /// inspector is attached, and an async call costs about as much as the rest.
    @inlinable @inline(__always)
    static func summarized(
        _ request: StoreRequest, context: RequestContext, next: NextResponder, selection: any TraceSelection
    ) async throws -> StoreResponse {
        let started = DefaultTracerClock.now.nanosecondsSinceEpoch
        let response: StoreResponse
        do {
            response = try await next(request, context)
        } catch {
            selection.finished(
                RequestSummary(
                    request: request, start: started, end: DefaultTracerClock.now.nanosecondsSinceEpoch, failed: true))
            throw error
        }
        selection.finished(
            RequestSummary(
                request: request, start: started, end: DefaultTracerClock.now.nanosecondsSinceEpoch,
                answeredBy: response.info.answeredBy, cacheStatus: response.info.cacheStatus,
                isStale: response.info.isStale, exchanges: response.info.exchanges))
        return response
    }

    /// Sends `request` on in a span of its own; what it sends below is traced too.
    private func traced(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        var traced = context
        traced.isTraced = true
        return try await Self.span(tracer, "storechain." + request.unconditional.kind.rawValue) { span in
            span.attributes = startAttributes(of: request)
            let response = try await next(request, traced)
            span.updateAttributes { Self.addEndAttributes(of: response.info, to: &$0) }
            return response
        }
    }

    /// What is known of a request before it is answered: its entity, predicate, object, page.
    private func startAttributes(of request: StoreRequest) -> SpanAttributes {
        let asked = request.unconditional
        var attributes = SpanAttributes()
        attributes["storechain.entity"] = asked.entities.sorted().joined(separator: ",")
        if case .revalidation = request { attributes["storechain.conditional"] = true }
        switch asked {
        case .fetch(let fetch), .page(let fetch, _):
            if let predicate = fetch.predicate {
                attributes["storechain.predicate"] = predicate.format(redactingValues: redactsValues)
            }
        case .objectFault(let id), .relationshipFault(let id, _), .relationshipPage(let id, _, _):
            attributes["storechain.object"] = id.description
        default: break
        }
        if case .relationshipFault(_, let name) = asked { attributes["storechain.relationship"] = name }
        if case .page(_, let page) = asked { attributes["storechain.page"] = page.description }
        return attributes
    }

    /// Who answered and how.
    private static func addEndAttributes(of info: ResponseInfo, to attributes: inout SpanAttributes) {
        attributes["storechain.answered_by"] = info.answeredBy
        attributes["storechain.source"] = info.origin.rawValue
        if let status = info.cacheStatus { attributes["storechain.cache.status"] = status.rawValue }
        if info.isStale { attributes["storechain.stale"] = true }
        if let pages = info.pagesRead { attributes["storechain.pages"] = pages }
        attributes["storechain.exchanges"] = info.exchanges
    }

    /// Runs `operation` in a span of `tracer` that is the current one meanwhile, ending it
    /// after, and marking it failed when `operation` throws. On the caller's executor: the
    /// tracing library's `withSpan` takes a closure of a type that runs on the global
    /// executor, so from the main actor it cost two executor hops per span.
    package static func span<T>(
        _ tracer: any Tracer, _ name: String, ofKind kind: SpanKind = .internal,
        isolation: isolated (any Actor)? = #isolation, _ operation: (any Span) async throws -> T
    ) async throws -> T {
        let span = tracer.startSpan(name, context: InstrumentationContext.current ?? .topLevel, ofKind: kind)
        defer { span.end() }
        do {
            return try await InstrumentationContext.$current.withValue(
                span.context,
                operation: {
                    _ = isolation  // the closure runs isolated to the caller, not on the global executor
                    return try await operation(span)
                }, isolation: isolation)
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }
}

/// Which requests a chain traces in full (`ChainTracing.selection`): a tracer that keeps only
/// some requests' spans (the inspector's, while no page follows the chain) says so here, so the
/// others cost no span at all, and takes a summary of each of them instead.
@usableFromInline package protocol TraceSelection: Sendable {
    /// Whether `request`, sent from the top of the chain to serve no other request (by the app,
    /// or by a handler on its own account), is traced in full with what it sends below.
    func tracesInFull(_ request: StoreRequest) -> Bool
    /// What the chain did for a request `tracesInFull` left untraced, when it ends.
    func finished(_ summary: consuming RequestSummary)
}

/// What the chain did for a request it did not trace in full (`TraceSelection`): the facts of
/// its span, without the span.
@usableFromInline package struct RequestSummary: Sendable {
    package var request: StoreRequest
    /// When it started and ended, in nanoseconds since 1970.
    package var start: UInt64
    package var end: UInt64
    package var answeredBy: String?
    package var cacheStatus: CacheStatus?
    package var isStale: Bool
    /// Exchanges with the backend its answer took.
    package var exchanges: Int
    /// Whether it failed.
    package var failed: Bool

    @usableFromInline package init(
        request: StoreRequest, start: UInt64, end: UInt64, answeredBy: String? = nil, cacheStatus: CacheStatus? = nil,
        isStale: Bool = false, exchanges: Int = 0, failed: Bool = false
    ) {
        self.request = request
        self.start = start
        self.end = end
        self.answeredBy = answeredBy
        self.cacheStatus = cacheStatus
        self.isStale = isStale
        self.exchanges = exchanges
        self.failed = failed
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
        guard let tracer else { return try await operation(nil) }
        return try await ChainTracing.span(tracer, name(), ofKind: kind) { span in try await operation(span) }
    }

    /// The tracer, when the chain traces this request (for spans of its own, and for injecting
    /// its context into outgoing requests).
    public var tracer: (any Tracer)? {
        isTracing ? services.tracing?.tracer : nil
    }

    /// Whether the chain traces this request (`tracer != nil`, without copying the tracer).
    package var isTracing: Bool {
        isTraced || services.tracesEveryRequest
    }
}
