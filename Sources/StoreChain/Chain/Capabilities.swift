/// What a handler or terminal can do besides answering requests. Code that needs such a part of
/// the chain asks for the capability (`chain.handlers(of: (any FaultBatching).self, …)`), never
/// for a concrete type, so a handler of your own can offer the same and be found the same way.
/// (`SyncingHandler` and `CachingHandler` are capabilities too; `FetchExplaining` is a
/// terminal's.)

/// A handler or terminal that can answer requests from what it holds, without the backend: a
/// cache (every `CachingHandler`), an outbox holding saves (`SaveHolding`), a local store
/// (`InMemoryStore`, `SQLiteStore`). A `.cacheOnly` request goes no further down the chain than
/// the last of them: below it the chain answers `not-cached` itself, so pagination, rate
/// limiting, retry, logging and a terminal that would ask the backend never see it. The
/// caches' own probes (`RequestContext.subrequest(_:serving:cachePolicy:)` with `.cacheOnly`)
/// start at the first of them, so a handler above the caches never sees them fail. A handler
/// of your own that answers from what it holds conforms too (it needs nothing more).
public protocol OfflineAnswering: Sendable {}

/// A handler that sends many object faults of an entity as one request.
public protocol FaultBatching: StoreHandler {
    /// How many faults of `entity` it sends together; `nil` when it does not batch `entity`.
    func faultBatchSize(for entity: String) -> Int?
}

/// A handler that reads a fetch from the backend in pages.
public protocol FetchPaging: StoreHandler {
    /// The page size it asks of `entity`'s endpoints; `nil` leaves each endpoint its own.
    func pageSize(for entity: String) -> Int?
}

/// A terminal whose listings come in pages: it answers `StoreRequest.page`, one backend exchange
/// each, and never walks a listing itself. A chain with no pager of its own (`FetchPaging`) reads
/// its fetches with a `PaginationHandler` it places at the seam, just below the last handler that
/// answers from what it holds (the caches, an outbox), so the handlers below (rate limiting,
/// retry, logging) see every page and the caches above see the fetch.
public protocol PagedResponder: StoreResponder {
    /// The model whose keys break ties in page order.
    var model: ObjectModel { get }
    /// How the chain's own pager reads pages when the chain has none.
    var defaultPagination: PaginationOptions { get }
}

/// A handler that limits the rate of requests to the backend, with a limiter that can say where
/// it stands (`RateLimiter.snapshot(at:)`).
package protocol RateLimiting: StoreHandler {
    var limiter: RateLimiter { get }
}

/// A terminal that counts its exchanges with the backend.
public protocol UpstreamCounting: StoreResponder {
    /// Requests and bytes exchanged so far.
    var traffic: UpstreamTraffic { get }
}

/// Requests and bytes a terminal exchanged with its backend.
public struct UpstreamTraffic: Sendable, Hashable {
    /// Requests sent (each page and each retry counts).
    public var requests = 0
    /// Bytes of the answers' bodies received.
    public var bytesReceived = 0
    /// Bytes of the requests' bodies sent.
    public var bytesSent = 0

    /// Traffic with the given counts.
    public init(requests: Int = 0, bytesReceived: Int = 0, bytesSent: Int = 0) {
        self.requests = requests
        self.bytesReceived = bytesReceived
        self.bytesSent = bytesSent
    }
}

extension Sequence where Element == any StoreHandler {
    /// The handlers that offer `type` (a capability protocol, as `(any FaultBatching).self`) for
    /// requests of `kind` for `entity` (`nil`: any), in chain order. A scoped handler counts
    /// only when its scope takes such requests (`ScopedHandler.applies(to:for:)`).
    public func handlers<H>(of type: H.Type, for kind: StoreRequest.Kind? = nil, entity: String? = nil) -> [H] {
        compactMap { $0.unscoped(as: type, for: kind, entity: entity) }
    }
}

extension Chain {
    /// The chain's handlers that offer `type` for requests of `kind` for `entity` (`nil`: any),
    /// in order, scopes respected:
    ///
    /// ```swift
    /// let batchSize = chain.handlers(of: (any FaultBatching).self, for: .objectFault, entity: "Track")
    ///     .lazy.compactMap { $0.faultBatchSize(for: "Track") }.first ?? 1
    /// ```
    public func handlers<H>(of type: H.Type, for kind: StoreRequest.Kind? = nil, entity: String? = nil) -> [H] {
        handlers.handlers(of: type, for: kind, entity: entity)
    }
}

extension Chain {
    /// Requests and bytes the terminal exchanged with its backend so far (what `storechain query
    /// --stats` prints), or `nil` when the terminal does not count them (an in-memory store).
    public var upstreamTraffic: UpstreamTraffic? {
        (terminal as? any UpstreamCounting)?.traffic
    }
}
