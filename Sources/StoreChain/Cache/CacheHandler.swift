import Foundation
import Logging

/// A caching handler: answers fetches and faults from its storage while they are fresh, and
/// otherwise forwards and stores what comes back. `MemoryCache` and the SQLite disk cache are
/// this handler over different storages, so both follow the same rules:
///
/// - **Expiry** per entity from `CacheOptions.expiry`, overridden by the response's
///   `Cache-Control` / `Expires` when allowed; `no-store` responses are not kept.
/// - **Policies** (`CachePolicy`): use cache; reload (skip the lookup, store the answer); cache
///   only (never forward past the caches); stale-while-revalidate (answer stale at once, marked
///   stale, and refresh in the background, publishing change events).
/// - **Revalidation**: stale data with validators is re-requested with them; "not modified"
///   renews its expiry without rewriting it.
/// - **Stale-if-error**: when the refresh fails with a transient error, the stale answer is
///   given, marked stale, with the error attached.
/// - **Windows**: a cached window of a query answers any narrower window of it.
/// - **Complete collections**: once every object of an entity is cached, any fetch of it is
///   answered locally.
/// - **Single-flight**: identical requests in flight at once make one downstream call.
/// - **Deletions**: a fault that finds an object gone, or a refreshed collection without it,
///   removes it and publishes a deletion.
public final class CacheHandler<Storage: CacheStorage>: StoreHandler {
    public let name: String
    /// The model the cached nodes and queries belong to.
    public let model: ObjectModel
    /// Where the cached entries are kept (memory, a SQLite file, PostgreSQL).
    public let storage: Storage
    /// Expiry and how long stale answers may stand in.
    public let options: CacheOptions
    let inFlight = SingleFlight<Forwarded>()
    /// The storage's order of saves when other handlers may hold its data too (`SaveOrderSharing`).
    let saveOrder: SaveOrder
    let plans: CachePlans

    /// A cache named `name` (as `ResponseInfo.answeredBy` and logs say) over `storage`.
    public init(name: String, model: ObjectModel, storage: Storage, options: CacheOptions = CacheOptions()) {
        self.name = name
        self.model = model
        plans = CachePlans(model: model)
        self.storage = storage
        self.options = options
        saveOrder = (storage as? any SaveOrderSharing)?.saveOrder ?? SaveOrder()
    }

    public func keepsAnswers(of entity: String) -> Bool { true }

    // The memory cache's hits are the hottest path there is: specialized, its calls to the storage
    // are direct (not through witness thunks, each an async frame of its own).
    @_specialize(where Storage == MemoryCacheStorage)
    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        switch request {
        case .page, .relationshipPage, .changes:
            // One page is not an answer to the fetch or fault it belongs to; changes are news.
            try await next(request, context)
        case .fetch(let fetch): try await self.fetch(fetch, context: context, next: next)
        case .objectFault(let id): try await objectFault(id, context: context, next: next)
        case .relationshipFault(let id, let relationship):
            try await relationshipFault(id, relationship, context: context, next: next)
        case .save(let changes): try await save(changes, context: context, next: next)
        case .revalidation(.fetch(let fetch), let validators):
            try await self.fetch(fetch, ifChangedSince: validators, context: context, next: next)
        case .revalidation(.objectFault(let id), let validators):
            try await objectFault(id, ifChangedSince: validators, context: context, next: next)
        case .revalidation(let request, _): try await handle(request, context: context, next: next)
        }
    }

    /// What a cache reports for an answer it forwarded for: when a cache below answered from
    /// what it holds, that cache's status (the answer did come from a cache, and says which in
    /// `answeredBy`), else `status`.
    static func status(_ status: CacheStatus, below: CacheStatus?) -> CacheStatus {
        switch below {
        case .hit?, .stale?, .revalidated?: below ?? status
        default: status
        }
    }

    /// Brings a cached answer up to date.
    typealias Refresh = @Sendable (CachedAnswer, RequestContext) async throws -> StoreResponse

    /// The rules every request kind shares: fresh hits, cache-only, stale-while-revalidate,
    /// revalidation, stale-if-error, and forwarding on a miss. `refresh` is made only when
    /// needed, so a fresh hit allocates no closure.
    func serve(
        _ request: StoreRequest, cached: CachedAnswer?, context: RequestContext, refresh: @autoclosure () -> Refresh,
        forward: () async throws -> StoreResponse
    ) async throws -> StoreResponse {
        var policy = context.effectiveCachePolicy(for: request)
        if policy == .reload {
            var response = try await forward()
            response.info.cacheStatus = .bypassed
            return response
        }
        guard let cached else { return try await forwardUncached(request, forward) }
        let now = context.clock.now
        if Self.isFreshHit(cached.freshness, policy: policy, at: now) { return answer(cached, status: .hit) }
        let mustRevalidate = cached.freshness.rules?.mustRevalidate == true
        if policy == .useCache, let maxStale = options.staleWhileRevalidate(for: cached.freshness) {
            policy = .staleWhileRevalidate(maxStale: maxStale)
        }
        switch policy {
        case .cacheOnly:
            // The app asked never to go upstream: the stale answer, marked stale.
            return answer(cached, status: .stale, isStale: true)
        case .staleWhileRevalidate(let maxStale)
        where !mustRevalidate && isWithin(maxStale, pastExpiryOf: cached, at: now):
            var detached = context
            detached.deadline = nil
            let background = detached
            let logger = context.logger
            let name = name
            let refresh = refresh()
            context.background.run {
                do {
                    _ = try await refresh(cached, background)
                } catch {
                    logger.warning("\(name): background refresh of \(request) failed: \(error)")
                }
            }
            return answer(cached, status: .stale, isStale: true)
        default:
            do {
                let response = try await refresh()(cached, context)
                // A cache below answered stale because the backend failed: this cache's own
                // answer saw every save since (a save edits the windows of both, but only one
                // that keeps temporary IDs shows an insert the outbox holds), and stands in.
                if response.info.isStale, let error = response.info.error, error.isTransient,
                    options.staleIfError(for: cached.freshness).map({ isWithin($0, pastExpiryOf: cached, at: now) })
                        == true
                {
                    var own = answer(cached, status: .stale, isStale: true)
                    own.info.error = error
                    return own
                }
                return response
            } catch let error as StoreChainError
                where error.isTransient
                && options.staleIfError(for: cached.freshness).map({ isWithin($0, pastExpiryOf: cached, at: now) })
                    == true
            {
                var response = answer(cached, status: .stale, isStale: true)
                response.info.error = error
                return response
            }
        }
    }

    /// Forwards what no cache down to this one holds; when the backend cannot be reached, says
    /// so (`offlineNotCached`) rather than as a transport error: nothing cached can stand in.
    private func forwardUncached(_ request: StoreRequest, _ forward: () async throws -> StoreResponse) async throws
        -> StoreResponse
    {
        do {
            return try await forward()
        } catch let error as StoreChainError where error.code == .transport {
            throw StoreChainError(
                .offlineNotCached, "the backend cannot be reached, and no cache holds \(request)",
                suggestion:
                    "ask again once the backend is back; what the app has read before is answered offline while the caches keep it (a save drops the windows it changes in ways the cached objects cannot decide)",
                underlying: error)
        }
    }

    /// The first rule of `serve`, which the hottest paths apply before building a cached answer:
    /// fresh data answers at once, as a hit, under every policy but reload.
    @inline(__always)
    static func isFreshHit(_ freshness: Freshness, policy: CachePolicy, at now: Date) -> Bool {
        policy != .reload && freshness.isFresh(at: now)
    }

    private func isWithin(_ allowance: Duration, pastExpiryOf cached: CachedAnswer, at now: Date) -> Bool {
        guard let expiresAt = cached.freshness.expiresAt else { return true }
        return now <= expiresAt.addingTimeInterval(allowance.timeInterval)
    }

    func answer(_ cached: CachedAnswer, status: CacheStatus, isStale: Bool = false) -> StoreResponse {
        var response = cached.response
        response.info.isStale = isStale
        response.info.cacheStatus = status
        return response
    }

    /// Sends `cached.source` down again, as a revalidation with its validators when it has
    /// them. On "not modified" renews the data's freshness and returns `nil`; otherwise stores
    /// the answer, publishes what changed and returns it. Claimed like a first fetch
    /// (`forwardOnce`), and the claim covers storing what came back: while another process
    /// sharing the storage refreshes the same, this one waits and returns what that one stored.
    func revalidate(_ cached: CachedAnswer, context: RequestContext, next: NextResponder) async throws -> StoreResponse?
    {
        var context = context
        context.cachePolicy = .useCache
        let source = cached.source
        let request = Self.conditional(source, ifChangedSince: cached.freshness.validators.nonEmpty)
        let mark = saveOrder.mark()
        let forwarded = try await inFlight.run("revalidate \(request) since save \(mark)") { [context] in
            try await forwardOnce(
                "revalidate \(request)", context: context, stored: { await storedAnswer(to: source, context: context) }
            ) {
                let response = try await next(request, context)
                await keep(revalidated: cached, by: response, readSince: mark, context: context)
                return response
            }
        }
        if !forwarded.isStored, forwarded.response.info.notModified { return nil }
        return forwarded.response
    }

    /// Stores what a revalidation of `cached` brought: a renewed freshness on "not modified",
    /// else the new answer (publishing what changed).
    private func keep(
        revalidated cached: CachedAnswer, by response: StoreResponse, readSince mark: UInt64, context: RequestContext
    ) async {
        guard response.info.notModified else {
            await keep(
                response, of: cached.source, readSince: mark, context: context, publishUpdates: true,
                alsoForgetting: [cached.target])
            return
        }
        let entity = cached.source.entities.first ?? ""
        let now = context.clock.now
        let renewed =
            options.expiry.renewed(cached.freshness, of: entity, by: response.info.freshness, now: now)
            ?? Self.unusable
        await perform("renew", context: context) { try await storage.refresh(cached.target, freshness: renewed) }
    }

    /// `request` as a revalidation with `validators`, when it is a fetch or an object fault (a
    /// relationship is read through its owner, which must not come back "not modified" in its
    /// place); else `request` itself.
    static func conditional(_ request: StoreRequest, ifChangedSince validators: Validators?) -> StoreRequest {
        switch (request, validators) {
        case (.fetch, let validators?), (.objectFault, let validators?): .revalidation(request, validators)
        default: request
        }
    }

    /// Stores what a forwarded `request`'s answer carries, unless a save that changes what it
    /// holds overtook it (in flight or done since `mark`: `SaveOrder`); when the answer may not
    /// be stored (`no-store`), makes what was stored for the request (and `alsoForgetting`)
    /// unusable.
    func keep(
        _ response: StoreResponse, of request: StoreRequest, readSince mark: UInt64, context: RequestContext,
        publishUpdates: Bool = false, alsoForgetting: [CacheTarget] = []
    ) async {
        if var write = await write(for: request, response: response, now: context.clock.now, context: context) {
            let (order, entities) = (saveOrder, write.entities)
            guard order.isUnchanged(entities, since: mark) else {
                context.logger.debug("\(name): not storing the answer to \(request): a save overtook it")
                return
            }
            // Checked again where the storage writes: a save may overtake it on its way there.
            write.condition = { order.isUnchanged(entities, since: mark) }
            await store(write, context: context, publishUpdates: publishUpdates)
        } else {
            await forget(alsoForgetting + Self.targets(of: request), ifNotStorable: response, context: context)
        }
    }

    /// The freshness of data that must not be used again (its request now answers `no-store`).
    static var unusable: Freshness {
        // No fetch time: it must not pass for data a refresh just stored.
        Freshness(expiresAt: .distantPast, rules: ResponseFreshness(noStore: true, mustRevalidate: true))
    }

    /// Makes what was stored for a request unusable when its new answer says `no-store`.
    func forget(_ targets: [CacheTarget], ifNotStorable response: StoreResponse, context: RequestContext) async {
        guard options.expiry.honoursResponseHeaders, response.info.freshness?.noStore == true else { return }
        await perform("forget", context: context) {
            for target in Set(targets) { try await storage.refresh(target, freshness: Self.unusable) }
        }
    }

    /// What a request's answer is stored as: a fetch's query window (and, for a whole entity,
    /// its collection), an object fault's node.
    static func targets(of request: StoreRequest) -> [CacheTarget] {
        switch request {
        case .fetch(let fetch):
            let window = CacheTarget.query(key: fetch.forwardedForCache.description)
            let whole = fetch.predicate == nil && fetch.fetchOffset == 0 && fetch.fetchLimit == nil
            return whole ? [window, .collections([fetch.entity])] : [window]
        case .objectFault(let id): return [.node(id)]
        case .revalidation(let request, _): return targets(of: request)
        case .relationshipFault, .save, .page, .relationshipPage, .changes: return []
        }
    }

    /// Applies a write; publishes removals always and updates when asked (background
    /// refreshes, so observers see the new data).
    func store(_ write: CacheWrite, context: RequestContext, publishUpdates: Bool = false) async {
        var write = write
        write.isRefresh = publishUpdates
        if !storage.keepsTemporaryObjects { write.leaveOutTemporaryIDs() }
        // Objects under temporary IDs that give way to the backend's are not deletions.
        let removed =
            (await perform("write", context: context) { [write] in try await storage.write(write) } ?? []).filter {
                !$0.isTemporary
            }
        guard !removed.isEmpty || (publishUpdates && !write.nodes.isEmpty) else { return }
        let updated = publishUpdates ? Set(write.nodes.map(\.id)) : []
        var entities = Set(removed.map(\.entity))
        if publishUpdates { entities.formUnion(write.nodes.map(\.id.entity)) }
        context.events.publish(
            ChangeEvent(
                updated: updated, deleted: removed, invalidatedEntities: entities,
                nodes: publishUpdates ? write.nodes : [], source: name))
    }

    /// Runs a storage operation; a failing storage is logged and treated as holding nothing,
    /// so the app keeps working from the backend.
    @discardableResult
    @inline(__always)  // so the operation's closure needs no frame of its own on a hit
    func perform<T>(_ action: String, context: RequestContext, _ operation: () async throws -> T) async -> T? {
        do {
            // The untraced path stays one call: this is every cache hit's hot path.
            guard context.isTracing else { return try await operation() }
            return try await context.withSpan("storechain.cache." + action) { span in
                span?.attributes["storechain.cache"] = name
                return try await operation()
            }
        } catch {
            storageFailed(action, error, context: context)
            return nil
        }
    }

    /// Logs a storage operation that failed; the request goes on without the cache.
    func storageFailed(_ action: String, _ error: any Error, context: RequestContext) {
        context.logger.warning("\(name): cache \(action) failed, continuing without it: \(error)")
    }

    /// The data a response carries, ready to store; `nil` when there is nothing to keep.
    func write(for request: StoreRequest, response: StoreResponse, now: Date, context: RequestContext) async
        -> CacheWrite?
    {
        // A stale answer from below (its cache's stale-while-revalidate or stale-if-error) is
        // older than the rules here allow; storing it would make it look fresh.
        guard !response.info.isStale else { return nil }
        return switch (request, response.result) {
        case (.fetch(let fetch), .fetched(let result)): fetchWrite(fetch, result: result, response: response, now: now)
        case (.objectFault(let id), .object(let node)): faultWrite(id, node: node, response: response, now: now)
        case (.relationshipFault(let id, let name), .relationship(let value)):
            await relationshipWrite(id, name, value: value, response: response, now: now, context: context)
        default: nil
        }
    }

    /// The freshness of data of `entity` in a response, or `nil` when it must not be stored.
    func freshness(for entity: String, response: StoreResponse, now: Date, validators: Bool) -> Freshness? {
        options.expiry.freshness(for: entity, rules: response.info.freshness, now: now, validators: validators)
    }

    /// Related nodes of a response, each with the freshness of its entity (worked out once per
    /// entity, and held once for all its nodes).
    func relatedNodes(_ nodes: [Node], response: StoreResponse, now: Date) -> [Node] {
        var byEntity: [String: OutOfLine<Freshness>?] = [:]
        return nodes.compactMap { node in
            guard !node.id.isTemporary else { return nil }
            let entity = node.id.entity
            let freshness =
                byEntity[entity]
                ?? freshness(for: entity, response: response, now: now, validators: false).map { OutOfLine($0) }
            byEntity[entity] = freshness
            guard let freshness else { return nil }
            var node = node
            node.sharedFreshness = freshness
            return node
        }
    }
}

/// A cached answer, and how to bring it up to date. (Not nested in the generic handler, so
/// copying one on every hit needs no generic metadata.)
struct CachedAnswer: Sendable {
    var response: StoreResponse
    var freshness: Freshness
    /// The request whose answer this data is (the wider window, the whole collection).
    var source: StoreRequest
    var target: CacheTarget
}
