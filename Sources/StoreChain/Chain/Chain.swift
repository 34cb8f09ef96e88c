import Foundation
import Logging

/// The ordered chain of handlers every request passes through, ending at a terminal responder.
///
/// 1. `send(_:)` makes a `RequestContext` (clock, logger, events, background work).
/// 2. The request goes to the first handler; each answers or forwards with `next`.
/// 3. A request no handler answers reaches the terminal.
/// 4. The response goes back up through every handler that forwarded.
/// 5. A successful save is published as a `ChangeEvent` to every observer.
///
/// **Sub-requests.** When answering a request needs more from upstream (the related objects
/// behind `album.artist.name`, a to-many list for `tracks.@count`, the objects of a fault), the
/// handler or terminal that needs it sends a request of its own from the first handler with
/// `RequestContext.subrequest(_:serving:)`, never a private backend call:
///
/// 1. The sub-request gets a fresh context with the serving request's deadline, cache policy
///    and logger, and none of the values handlers set for that request alone (progress, say).
/// 2. Its lineage (`RequestContext.lineage`) is the serving request's plus that request, so
///    handlers can tell it apart (logging names the request it served; rate limiting lets it run
///    inside its parent's in-flight permit) and a request already being answered further up is
///    not sent again: the responder does that work itself, as it does outside a chain.
/// 3. It passes every handler like any request: caches answer it or store its answer, batching,
///    rate limiting and retry treat it on its own, and cancellation reaches it through the task.
///
/// **Pages.** A listing that pages is read one `StoreRequest.page` at a time: a pagination
/// handler sends them to the handlers below it. A chain whose terminal reads pages
/// (`PagedResponder`) and that has no pager of its own gets one at the seam, just below the last
/// handler that answers from what it holds, so the caches see the fetch and rate limiting,
/// retry and logging see each page; the terminal makes one exchange per page and walks nothing.
/// A page carries its own validators (`PageRequest.validators`), so an expired answer is
/// revalidated page by page.
///
/// **Changes from elsewhere.** A cache whose storage other processes share (`postgres-cache`)
/// hears of their saves (`CachingHandler.changesFromElsewhere()`): the chain has its other
/// caches forget what the change touches, then publishes it as a `ChangeEvent`, so observers
/// fetch again.
///
/// **Cache-only.** A `.cacheOnly` request goes no further than the last handler that answers
/// from what it holds (`OfflineAnswering`: the caches, an outbox, a local terminal): below it
/// the chain fails it with `not-cached`, and the caches' probes start at the first such handler.
///
/// **Revalidations.** A cache holding an expired answer with validators sends
/// `StoreRequest.revalidation(request, validators)` below itself; it comes back "not modified"
/// or with the full answer. What a request means is always in its type, never in the context.
///
/// The chain is built once, here, not per request: each handler is called with the position of
/// the next one (`NextResponder`).
///
/// ```swift
/// let chain = Chain(terminal: store) {
///     LoggingHandler()
///     MyCache().when(kinds: [.fetch])
/// }
/// let response = try await chain.send(.fetch(FetchRequest(entity: "Band")))
/// await chain.shutdown()
/// ```
public final class Chain: Sendable {
    /// The handlers, in the order a request passes them: those given, and the pager the chain
    /// placed at the seam for a terminal that reads pages when none of them pages.
    public let handlers: [any StoreHandler]
    /// The end of the chain, which answers what no handler did.
    public let terminal: any StoreResponder
    /// The clock, logger, event hub and background work every request shares.
    package let services: ChainServices
    @usableFromInline let entry: NextResponder
    /// The first handler, below the tracing entry; and what chooses the requests traced in
    /// full, when tracing summarizes the others (`ChainTracing.selection`). With these, `send`
    /// summarizes an untraced request itself, without the entry's async call.
    @usableFromInline let firstHandler: NextResponder
    @usableFromInline let selection: (any TraceSelection)?
    /// Tasks relaying the changes caches learn of from other processes; `shutdown()` ends them.
    private let relays: [Task<Void, Never>]

    /// The clock every handler of this chain reads.
    public var clock: any StoreClock { services.clock }
    /// The logger the chain's handlers log to.
    public var logger: Logger { services.logger }
    /// Change events from saves and from handlers that learn of changes.
    public var events: EventHub { services.events }
    /// Work handlers started in the background; `shutdown()` waits for it.
    public var background: BackgroundTasks { services.background }

    /// A chain of `handlers`, first outermost, in front of `terminal`.
    ///
    /// - Parameters:
    ///   - handlers: The handlers in order, from the app down to the terminal.
    ///   - terminal: What answers the requests that reach the end of the chain.
    ///   - clock: The time every handler reads (a `ManualClock` in tests).
    ///   - logger: The logger requests use unless their context sets another.
    ///   - tracing: How requests are traced; by default with the tracer bootstrapped in
    ///     `InstrumentationSystem`, and not at all when none is.
    public init(
        handlers: [any StoreHandler], terminal: any StoreResponder, clock: any StoreClock = SystemClock(),
        logger: Logger = Logger(label: "storechain"), tracing: ChainTracing? = .bootstrapped()
    ) {
        let handlers = Self.pagingAtTheSeam(handlers, terminal: terminal)
        self.handlers = handlers
        self.terminal = terminal
        self.services = ChainServices(clock: clock, logger: logger, tracing: tracing)
        let links = ChainLinks(handlers: handlers, terminal: terminal)
        var next = NextResponder(links, at: 0)
        firstHandler = next
        services.probeEntry = NextResponder(links, at: links.offlineStart)
        selection = tracing?.selection
        // Every request from the top (the app's and sub-requests) gets its span, or its summary, here.
        if let tracing { next = tracing.entry(before: next) }
        entry = next
        services.entry = next
        services.install(handlers)
        services.narrowing = terminal as? any FetchNarrowing
        services.backendReads = terminal as? any BackendReads
        relays = Self.relayChangesFromElsewhere(among: handlers, services: services)
    }

    deinit {
        for relay in relays { relay.cancel() }
    }

    /// `handlers` with a pager at the seam when the terminal's listings come in pages and no
    /// handler pages (one scoped to some requests does not count: the others need one too).
    private static func pagingAtTheSeam(_ handlers: [any StoreHandler], terminal: any StoreResponder)
        -> [any StoreHandler]
    {
        guard let paged = terminal as? any PagedResponder, !handlers.contains(where: { $0 is any FetchPaging }) else {
            return handlers
        }
        let seam = ChainLinks(handlers: handlers, terminal: terminal).offlineEnd
        var handlers = handlers
        handlers.insert(PaginationHandler(model: paged.model, options: paged.defaultPagination), at: seam)
        return handlers
    }

    /// Builds a chain from handlers listed in order.
    public convenience init(
        terminal: any StoreResponder, clock: any StoreClock = SystemClock(),
        logger: Logger = Logger(label: "storechain"), tracing: ChainTracing? = .bootstrapped(),
        @HandlerBuilder handlers: () -> [any StoreHandler]
    ) {
        self.init(handlers: handlers(), terminal: terminal, clock: clock, logger: logger, tracing: tracing)
    }

    /// A context for one request, with the chain's services.
    public func makeContext(cachePolicy: CachePolicy? = nil, deadline: Date? = nil) -> RequestContext {
        RequestContext(services: services, cachePolicy: cachePolicy, deadline: deadline)
    }

    /// Sends a request down the chain.
    ///
    /// - Throws: whatever the handler or terminal that failed threw; `CancellationError`
    ///   unchanged when the calling task is cancelled.
    public func send(_ request: StoreRequest, context: RequestContext? = nil) async throws -> StoreResponse {
        try await send(request, context: context ?? makeContext())
    }

    /// Sends a request down the chain with `context` (made by `makeContext`). (Taking the
    /// context as it is, not as an optional, spares every request a copy of it.)
    ///
    /// - Throws: whatever the handler or terminal that failed threw; `CancellationError`
    ///   unchanged when the calling task is cancelled.
    @inlinable @inline(__always)  // so the caller calls the first handler itself: one async frame fewer
    public func send(_ request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        let response: StoreResponse
        if let selection, context.lineage.isEmpty, !selection.tracesInFull(request) {
            response = try await ChainTracing.summarized(
                request, context: context, next: firstHandler, selection: selection)
        } else {
            response = try await entry(request, context)
        }
        if case .save = request { published(request, response, context: context) }
        return response
    }

    /// Publishes a successful save as a `ChangeEvent`.
    @usableFromInline
    func published(_ request: StoreRequest, _ response: StoreResponse, context: RequestContext) {
        guard case .save(let changes) = request, case .saved(let result) = response.result else { return }
        events.publish(Self.event(for: changes, result: result, source: context.sender ?? "save"))
    }

    /// Fetches through the chain and returns the fetch result.
    public func fetch(_ request: FetchRequest, context: RequestContext? = nil) async throws -> FetchResult {
        try await send(.fetch(request), context: context ?? makeContext()).fetchResult()
    }

    /// Stops following change feeds and relaying changes from other processes (waiting until
    /// each has stopped, so none writes the caches afterwards), waits for all background work to
    /// finish (cancelling it first if asked), then ends every event stream. Requests sent
    /// afterwards still work, but start no background work.
    public func shutdown(cancelling: Bool = false) async {
        for relay in relays { relay.cancel() }
        for relay in relays { await relay.value }
        await background.shutdown(cancelling: cancelling)
        events.finish()
    }

    private static func event(for changes: SaveChanges, result: SaveResult, source: String) -> ChangeEvent {
        let inserted = Set(changes.inserted.map { result.permanentIDs[$0.id] ?? $0.id })
        return ChangeEvent(
            inserted: inserted, updated: Set(changes.updated.map(\.id)), deleted: Set(changes.deleted),
            invalidatedEntities: changes.entities.union(result.nodes.map(\.id.entity)), nodes: result.nodes,
            permanentIDs: result.permanentIDs, source: source,
            outbox: OutboxOutcome(
                unsentUpdates: result.pending.isEmpty ? [] : changes.updated.filter { result.pending.contains($0.id) }))
    }
}
