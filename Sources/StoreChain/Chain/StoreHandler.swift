/// The rest of the chain below a handler: call it as a function, `try await next(request,
/// context)`. It is `Sendable` and may be kept, so a handler can call it later from a background
/// task (revalidation, a batch, an outbox replay).
///
/// Inside a chain it is the position of the next handler, and calling it calls that handler
/// directly: one async frame a hop, where a closure around each handler made two (each with
/// its executor check on return and a copy of the response). `init(_:)` makes one from a
/// closure, for calling a handler on its own.
///
/// ```swift
/// let next = NextResponder { request, context in try await store.respond(to: request, context: context) }
/// let response = try await handler.handle(request, context: context, next: next)
/// ```
public struct NextResponder: Sendable {
    @usableFromInline
    enum Target: Sendable {
        /// The handler at this position of the chain, or its terminal past the last handler.
        case link(ChainLinks, Int)
        case body(@Sendable (StoreRequest, RequestContext) async throws -> StoreResponse)
    }

    @usableFromInline let target: Target

    /// The rest of the chain as a closure.
    public init(_ body: @escaping @Sendable (StoreRequest, RequestContext) async throws -> StoreResponse) {
        target = .body(body)
    }

    @usableFromInline
    init(_ links: ChainLinks, at position: Int) {
        target = .link(links, position)
    }

    /// Sends `request` to the rest of the chain.
    @inlinable @inline(__always)
    public func callAsFunction(_ request: StoreRequest, _ context: RequestContext) async throws -> StoreResponse {
        switch target {
        case .link(let links, let position):
            // Below the last handler that answers from what it holds, nothing may answer a
            // cache-only request: it is refused here, at the seam, and never goes further.
            if position == links.offlineEnd, request.kind != .save,
                context.effectiveCachePolicy(for: request) == .cacheOnly
            {
                throw StoreChainError.refusingCacheOnly(request)
            }
            guard position < links.handlers.count else {
                return try await links.terminal.respond(to: request, context: context)
            }
            return try await links.handlers[position].handle(
                request, context: context, next: NextResponder(links, at: position + 1))
        case .body(let body):
            return try await body(request, context)
        }
    }
}

/// A chain's handlers and terminal, which `NextResponder` walks by position.
@usableFromInline
final class ChainLinks: Sendable {
    @usableFromInline let handlers: [any StoreHandler]
    @usableFromInline let terminal: any StoreResponder
    /// The position of the first handler that answers from what it holds (`OfflineAnswering`),
    /// where the caches' probes start; the terminal's when none does.
    let offlineStart: Int
    /// The position just below the last handler that answers from what it holds, where a
    /// cache-only request is refused; past the terminal when the terminal answers offline.
    @usableFromInline let offlineEnd: Int

    init(handlers: [any StoreHandler], terminal: any StoreResponder) {
        self.handlers = handlers
        self.terminal = terminal
        let answering = handlers.indices.filter { handlers[$0].unscoped(as: (any OfflineAnswering).self) != nil }
        if terminal is any OfflineAnswering {
            offlineStart = answering.first ?? handlers.count
            offlineEnd = handlers.count + 1
        } else {
            offlineStart = answering.first ?? 0
            offlineEnd = answering.last.map { $0 + 1 } ?? 0
        }
    }
}

/// One link in the chain: answers a request, or forwards it with `next` and may work on the
/// response on the way back up.
///
/// ```swift
/// struct Timing: StoreHandler {
///     func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws -> StoreResponse {
///         let start = context.clock.now
///         let response = try await next(request, context)
///         context.logger.info("\(request.kind) took \(context.clock.now.timeIntervalSince(start))s")
///         return response
///     }
/// }
/// ```
///
/// A handler that does not apply returns `try await next(request, context)`. Keep long-lived
/// state in a `Mutex` or an actor, and per-request state in the context.
public protocol StoreHandler: Sendable {
    /// The name that says who answered in `ResponseInfo` and logs; the type name by default.
    var name: String { get }

    /// Answers `request`, or passes it to `next` (the rest of the chain) and works on what comes
    /// back.
    ///
    /// - Parameters:
    ///   - request: what is asked.
    ///   - context: what every request carries: cache policy, deadline, the chain's clock and logger.
    ///   - next: the rest of the chain; call it at most once per request it forwards.
    /// - Returns: the answer to `request`.
    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse

    /// Whether this handler keeps the answers to `entity`'s fetches and answers later requests
    /// from them (a cache does); `false` by default. The query engine weighs reading a related
    /// entity's whole listing once against smaller reads by it (`BackendReads`).
    func keepsAnswers(of entity: String) -> Bool
}

extension StoreHandler {
    public var name: String { String(describing: type(of: self)) }

    public func keepsAnswers(of entity: String) -> Bool { false }

    /// This handler, applied only to some request kinds and entities; other requests pass by.
    ///
    /// ```swift
    /// MyBandCache().when(kinds: [.fetch], entities: ["Band"])
    /// ```
    public func when(kinds: Set<StoreRequest.Kind>? = nil, entities: Set<String>? = nil) -> ScopedHandler {
        ScopedHandler(self, kinds: kinds, entities: entities)
    }
}

/// The end of the chain: answers every request (a remote backend, a SQLite store, memory).
public protocol StoreResponder: Sendable {
    /// The name that says who answered in `ResponseInfo` and logs; the type name by default.
    var name: String { get }

    /// What this terminal's data comes from (a backend's address and mapping, a file), so a
    /// disk cache never answers with data another source gave it; `nil` when it has no lasting
    /// identity (the default).
    var cacheNamespace: String? { get }

    /// Answers `request` (a terminal answers everything, or throws saying why it cannot).
    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse
}

extension StoreResponder {
    /// The type's name.
    public var name: String { String(describing: type(of: self)) }

    public var cacheNamespace: String? { nil }
}

extension StoreHandler {
    /// The handler doing the work, as an `H`: this one, or the one a `ScopedHandler` wraps when
    /// its scope takes requests of `kind` for `entity` (`nil`: any). `nil` when it is no `H`, or
    /// its scope passes such requests by.
    package func unscoped<H>(as type: H.Type, for kind: StoreRequest.Kind? = nil, entity: String? = nil) -> H? {
        guard let scoped = asScoped else { return self as? H }
        return scoped.applies(to: kind, for: entity) ? scoped.wrapped as? H : nil
    }

    /// The request kinds and entities this handler is limited to (`when(kinds:entities:)`);
    /// `nil` for a handler that takes every request.
    package var scope: (kinds: Set<StoreRequest.Kind>?, entities: Set<String>?)? {
        asScoped.map { ($0.kinds, $0.entities) }
    }

    /// The one place that asks whether a handler is scoped.
    private var asScoped: ScopedHandler? { self as? ScopedHandler }
}

/// A handler that applies only to some request kinds and entities.
public struct ScopedHandler: StoreHandler {
    /// The handler that runs where the scope applies.
    public let wrapped: any StoreHandler
    /// The kinds it applies to; `nil` means all.
    public let kinds: Set<StoreRequest.Kind>?
    /// The entities it applies to; `nil` means all. A save applies when it touches any of them.
    public let entities: Set<String>?

    /// `wrapped`, applied to requests of `kinds` about `entities` (`nil`: all of them).
    public init(_ wrapped: any StoreHandler, kinds: Set<StoreRequest.Kind>? = nil, entities: Set<String>? = nil) {
        self.wrapped = wrapped
        self.kinds = kinds
        self.entities = entities
    }

    public var name: String { wrapped.name }

    public func keepsAnswers(of entity: String) -> Bool {
        applies(to: .fetch(FetchRequest(entity: entity))) && wrapped.keepsAnswers(of: entity)
    }

    /// Whether `request` is in the scope: its kind is one of `kinds` and it is about one of
    /// `entities`.
    public func applies(to request: StoreRequest) -> Bool {
        if let kinds, !kinds.contains(request.kind) { return false }
        if let entities, request.entities.isDisjoint(with: entities) { return false }
        return true
    }

    /// Whether it applies to requests of `kind` for `entity` (`nil`: of any kind, for any entity).
    package func applies(to kind: StoreRequest.Kind?, for entity: String?) -> Bool {
        if let kind, let kinds, !kinds.contains(kind) { return false }
        if let entity, let entities, !entities.contains(entity) { return false }
        return true
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        guard applies(to: request) else { return try await next(request, context) }
        return try await wrapped.handle(request, context: context, next: next)
    }
}

/// Builds a list of handlers in chain order.
@resultBuilder
public enum HandlerBuilder {
    /// One handler.
    public static func buildExpression(_ handler: any StoreHandler) -> [any StoreHandler] { [handler] }
    /// The handlers of each line, in order.
    public static func buildBlock(_ parts: [any StoreHandler]...) -> [any StoreHandler] { parts.flatMap { $0 } }
    /// The handlers of an `if` without `else`, when it holds.
    public static func buildOptional(_ part: [any StoreHandler]?) -> [any StoreHandler] { part ?? [] }
    /// The handlers of an `if`'s first branch.
    public static func buildEither(first part: [any StoreHandler]) -> [any StoreHandler] { part }
    /// The handlers of an `else` branch.
    public static func buildEither(second part: [any StoreHandler]) -> [any StoreHandler] { part }
    /// The handlers of a `for` loop's iterations, in order.
    public static func buildArray(_ parts: [[any StoreHandler]]) -> [any StoreHandler] { parts.flatMap { $0 } }
}
