import Foundation
import Logging

/// What travels with one request down the chain: its deadline, logger and cache policy, the
/// chain's services (clock, events, background work), and cross-cutting values handlers pass to
/// the handlers below them (a progress callback, metrics) without any global state. What a
/// request means (a page, a revalidation) is in the request's type, never here.
public struct RequestContext: Sendable {
    /// The chain's long-lived services, shared by every request (one reference to copy per hop).
    public let services: ChainServices
    /// Overrides the fetch request's own cache policy when set.
    public var cachePolicy: CachePolicy?
    /// When the request must be answered by; handlers that wait check it.
    public var deadline: Date?
    /// Who sent the request (an `ObjectContext` sets its own name), so it can tell its own
    /// change events from others'. (`ResponseInfo.origin` is where an answer came from.)
    public var sender: String?
    /// The requests this one was sent to serve, outermost first; empty for a request the app
    /// sent (see `subrequest(_:serving:)`).
    public private(set) var lineage: [StoreRequest] = []
    /// Whether `ChainTracing.selection` chose this request (or the one it serves) to be traced
    /// in full; only read when the chain's tracing has a selection (see `tracer`).
    package var isTraced = false
    private var loggerOverride: Logger?
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// A context over a chain's `services`, with a cache policy and a deadline when given.
    public init(services: ChainServices = ChainServices(), cachePolicy: CachePolicy? = nil, deadline: Date? = nil) {
        self.services = services
        self.cachePolicy = cachePolicy
        self.deadline = deadline
    }

    /// A context with its own services, for calling a handler or responder directly.
    public init(
        clock: any StoreClock, logger: Logger = Logger(label: "storechain"), cachePolicy: CachePolicy? = nil,
        deadline: Date? = nil
    ) {
        self.init(services: ChainServices(clock: clock, logger: logger), cachePolicy: cachePolicy, deadline: deadline)
    }

    /// The chain's clock.
    public var clock: any StoreClock { services.clock }
    /// Publishes change events to the chain's observers.
    public var events: EventHub { services.events }
    /// Runs work that outlives the request (revalidation, prefetch); `Chain.shutdown()` awaits it.
    public var background: BackgroundTasks { services.background }

    /// The request's logger: the chain's, unless a handler set one with more metadata.
    public var logger: Logger {
        get { loggerOverride ?? services.logger }
        set { loggerOverride = newValue }
    }

    /// A value a handler stored for the handlers below it.
    public subscript<Key: RequestContextKey>(key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    /// The cache policy that applies to `request`: the context's override, the fetch request's
    /// own, or `.useCache`.
    public func effectiveCachePolicy(for request: StoreRequest) -> CachePolicy {
        if let cachePolicy { return cachePolicy }
        // Matched in place: `request.unconditional` copied the request on every cache hit.
        switch request {
        case .fetch(let fetch): return fetch.cachePolicy
        case .revalidation(let revalidated, _): return effectiveCachePolicy(for: revalidated)
        default: return .useCache
        }
    }

    /// How deep sub-requests may nest before a responder does the work itself.
    static let maxLineage = 8

    /// Sends a request that answering `parent` needs from upstream (the related objects behind
    /// a key path, a to-many list, the objects of a fault) through the whole chain, from its
    /// first handler, so that every cache can answer it and batching, rate limiting, retry and
    /// logging see it. It keeps this request's deadline, cancellation, cache policy and logger,
    /// and none of the values handlers set for this request alone.
    ///
    /// `cachePolicy` overrides the policy for this sub-request alone: `.cacheOnly` asks whether
    /// the caches can answer without the backend (a `not-cached` error when they cannot). Such
    /// a probe starts at the first cache (`OfflineAnswering`), not at the first handler: the
    /// handlers above the caches see only what the app asked, not the caches' probes.
    ///
    /// - Returns: the response, or `nil` when there is no chain above (a responder called on
    ///   its own) or when `request` is already being answered further up (a loop); the caller
    ///   then does the work itself.
    public func subrequest(_ request: StoreRequest, serving parent: StoreRequest, cachePolicy: CachePolicy? = nil)
        async throws -> StoreResponse?
    {
        guard let entry = services.entry, request != parent, !lineage.contains(request),
            lineage.count < Self.maxLineage
        else { return nil }
        var context = RequestContext(
            services: services, cachePolicy: cachePolicy ?? self.cachePolicy, deadline: deadline)
        context.sender = sender
        context.loggerOverride = loggerOverride
        context.lineage = lineage + [parent]
        context.isTraced = isTraced
        if request.kind != .save, context.effectiveCachePolicy(for: request) == .cacheOnly,
            let probeEntry = services.probeEntry
        {
            return try await probeEntry(request, context)
        }
        return try await entry(request, context)
    }

    /// Whether the request came through a chain, which takes its sub-requests; `false` for a
    /// handler or responder called on its own.
    package var isInChain: Bool { services.entry != nil }

    /// This context for sending its request into `chain` instead: the same cache policy,
    /// deadline, sender, logger and values, with that chain's services.
    package func moved(to chain: Chain) -> RequestContext {
        var context = chain.makeContext(cachePolicy: cachePolicy, deadline: deadline)
        context.sender = sender
        context.loggerOverride = loggerOverride
        context.values = values
        return context
    }

    /// `subrequest(_:serving:cachePolicy:)` for a caller with no other way to get the answer.
    ///
    /// - Throws: `.invalidRequest` when the chain cannot take `request`: outside a chain, when
    ///   answering `parent` needs `request` itself (a loop), or nested too deep.
    package func subrequestThroughChain(
        _ request: StoreRequest, serving parent: StoreRequest, cachePolicy: CachePolicy? = nil
    ) async throws -> StoreResponse {
        if let response = try await subrequest(request, serving: parent, cachePolicy: cachePolicy) { return response }
        let why =
            !isInChain
            ? "it was sent outside a chain"
            : lineage.count >= Self.maxLineage
                ? "requests nest more than \(Self.maxLineage) deep" : "it is already being answered above (a loop)"
        throw StoreChainError(
            .invalidRequest, "answering \(parent) needs \(request), which the chain cannot take: \(why)",
            suggestion: "send requests through a Chain; a key path that leads back to itself cannot be loaded")
    }

    /// Sends a request a handler makes on its own account rather than to answer this one (an
    /// outbox replaying a save it recorded earlier) through the whole chain, from its first
    /// handler, so the caches above the sender store its answer. It gets a fresh context with
    /// the chain's services alone: no deadline, cache policy, sender or lineage of this request.
    ///
    /// `cachePolicy` applies to it alone: `.reload` makes the caches store the backend's answer
    /// in place of what they hold.
    ///
    /// - Throws: `.unavailable` when there is no chain to send it through (a handler called on
    ///   its own), and whatever the chain throws.
    public func sendOnOwnAccount(_ request: StoreRequest, cachePolicy: CachePolicy? = nil) async throws
        -> StoreResponse
    {
        guard let entry = services.entry else {
            throw StoreChainError(
                .unavailable,
                "\(request) was to be sent through the chain, and there is none (a handler called on its own)",
                suggestion: "put the handler in a Chain")
        }
        return try await entry(request, RequestContext(services: services, cachePolicy: cachePolicy))
    }

    /// Throws when the deadline has passed or the task is cancelled.
    public func checkDeadline() throws {
        try Task.checkCancellation()
        if let deadline, clock.now >= deadline {
            throw StoreChainError(
                .timedOut, "the request's deadline passed", suggestion: "allow more time, or retry later")
        }
    }
}

/// A typed key for cross-cutting values in a `RequestContext` (never for what the request
/// means, which is in its type).
///
/// ```swift
/// enum TenantKey: RequestContextKey { typealias Value = String }
/// context[TenantKey.self] = "acme"
/// ```
public protocol RequestContextKey {
    /// The type of the value stored under this key.
    associatedtype Value: Sendable
}

/// What every request through one chain shares: its clock, logger, event hub and background
/// work.
public final class ChainServices: Sendable {
    /// The clock time-dependent handlers read and sleep on.
    public let clock: any StoreClock
    /// The logger handlers log to.
    public let logger: Logger
    /// Where change events are published.
    public let events: EventHub
    /// Work that outlives the request that started it; the chain waits for it at shutdown.
    public let background: BackgroundTasks
    /// (`NextResponder` is a struct. When it was a closure type, a function stored directly in
    /// the generic lock was reabstracted on every `withLock` and written back wrapped in a new
    /// thunk, so each sub-request added two layers: 87,000 after the 1,000-operation soak.)
    private let top = Locked<NextResponder?>(nil)

    /// The first handler of the chain these services belong to, for sub-requests; `nil` for
    /// services made to call a handler or responder on its own.
    var entry: NextResponder? {
        get { top.withLock { $0 } }
        set { top.withLock { $0 = newValue } }
    }

    private let probeTop = Locked<NextResponder?>(nil)

    /// The chain's first handler that answers from what it holds (`OfflineAnswering`), where
    /// cache-only sub-requests start: the handlers above the caches never see their probes.
    var probeEntry: NextResponder? {
        get { probeTop.withLock { $0 } }
        set { probeTop.withLock { $0 = newValue } }
    }

    private let handlers = Locked<[any StoreHandler]>([])
    private let narrower = Locked<(any FetchNarrowing)?>(nil)

    /// The chain's terminal, when it narrows fetches (`FetchNarrowing`), for its pagers.
    package var narrowing: (any FetchNarrowing)? {
        get { narrower.withLock { $0 } }
        set { narrower.withLock { $0 = newValue } }
    }

    private let reads = Locked<(any BackendReads)?>(nil)

    /// What the chain's pagers learned of its listings' sizes, for the query engine.
    package let listingSizes = ListingSizes()

    /// The chain's terminal, when it says how its backend reads related objects (`BackendReads`),
    /// for the query engine.
    package var backendReads: (any BackendReads)? {
        get { reads.withLock { $0 } }
        set { reads.withLock { $0 = newValue } }
    }

    /// The chain's handlers, for `keepsAnswers(of:)`.
    func install(_ handlers: [any StoreHandler]) {
        self.handlers.withLock { $0 = handlers }
    }

    /// Whether a handler of the chain keeps `entity`'s fetch answers (a cache), so that what one
    /// request reads, the requests after it find without going upstream; `false` for services
    /// made to call a handler or responder on its own.
    package func keepsAnswers(of entity: String) -> Bool {
        handlers.withLock { $0 }.contains { $0.keepsAnswers(of: entity) }
    }

    /// Has every cache of the chain forget what `change` makes wrong (`CachingHandler.forget`),
    /// for a handler that learns of a change the caches cannot see pass: an outbox whose held
    /// save the backend refused, after the caches showed it. The caller publishes the change.
    public func forgetInCaches(_ change: ChangeEvent, context: RequestContext) async {
        for cache in handlers.withLock({ $0 }).handlers(of: (any CachingHandler).self) {
            await cache.forget(change, context: context)
        }
    }

    /// How requests are traced; `nil`: not at all.
    public let tracing: ChainTracing?
    /// Whether every request is traced (tracing without a selection): read on every cache hit,
    /// where copying `tracing` to ask would cost two retains and releases.
    package let tracesEveryRequest: Bool

    /// Services with the given clock (the system clock by default), logger and tracing.
    public init(
        clock: any StoreClock = SystemClock(), logger: Logger = Logger(label: "storechain"),
        events: EventHub = EventHub(), background: BackgroundTasks = BackgroundTasks(), tracing: ChainTracing? = nil
    ) {
        self.clock = clock
        self.logger = logger
        self.events = events
        self.background = background
        self.tracing = tracing
        tracesEveryRequest = tracing != nil && tracing?.selection == nil
    }
}
