import Foundation
import Logging
import StoreChain
import StoreChainSQLite
import StoreChainTestSupport
import StoreChainTesting

#if Postgres
    import StoreChainPostgres
#endif

/// The caches, so every shared rule is tested over each storage: memory, a SQLite file and a
/// PostgreSQL schema of its own (`TestPostgres`; with the Postgres trait).
enum CacheKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case memory, disk
    #if Postgres
        case postgres
    #endif
    var description: String { rawValue }

    /// Whether a save edits the windows it changes in place. The shared PostgreSQL cache drops
    /// them instead: another process may have stored a newer window since this one was read.
    var editsWindows: Bool {
        #if Postgres
            if self == .postgres { return false }
        #endif
        return true
    }
}

/// A backend for cache tests: the music fixture with what HTTP adds — response headers, an
/// ETag answered with "not modified", failures, and (optionally) whole collections.
final class FakeBackend: StoreResponder {
    struct State {
        /// The freshness rules every answer carries (`nil`: none, so the cache's ttl applies).
        var freshness: ResponseFreshness?
        var etag: String?
        var failure: StoreChainError?
        /// Like a dump-only API: every fetch that asks for whole collections gets all of them.
        var dumpsEverything = false
        var validatorsSeen: [String?] = []
        /// Faults and fetches wait here until the clock passes this time (for single-flight).
        var holdUntil: Date?
        /// Fetches and faults read the store at once and answer when the clock passes this time,
        /// so a save can reach the store while their answer is on its way.
        var answersHeldUntil: Date?
        /// How many answers have read the store and wait for `answersHeldUntil`.
        var heldAnswers = 0
        /// Relationships a listing of the whole entity leaves out (by entity), as slim list
        /// serializers leave out foreign keys.
        var listingsLeaveOut: [String: Set<String>] = [:]
    }

    let store: InMemoryStore
    let clock: ManualClock
    let name = "FakeBackend"
    let state = Watched(State())
    private let recorded = Watched<[StoreRequest]>([])

    init(clock: ManualClock) throws {
        store = try MusicFixture.store()
        self.clock = clock
    }

    var requests: [StoreRequest] { recorded.withLock { $0 } }
    /// Requests of `kind` (a revalidation counts as the request it revalidates).
    func count(_ kind: StoreRequest.Kind? = nil) -> Int {
        requests.filter { kind == nil || $0.unconditional.kind == kind }.count
    }
    func update(_ change: (inout State) -> Void) { state.withLock { change(&$0) } }

    /// Waits until at least `count` answers have read the store and wait for `answersHeldUntil`.
    func waitForHeldAnswers(_ count: Int) async throws {
        try await state.wait(for: "\(count) answers held by the fake backend") { $0.heldAnswers >= count }
    }

    /// Waits until at least `count` requests of `kind` have arrived, woken by the request that
    /// makes them `count`.
    func waitForRequests(_ count: Int, _ kind: StoreRequest.Kind? = nil) async throws {
        try await recorded.wait(for: "\(count) requests at the fake backend") { requests in
            requests.filter { kind == nil || $0.unconditional.kind == kind }.count >= count
        }
    }

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        recorded.withLock { $0.append(request) }
        var validators: Validators?
        if case .revalidation(_, let sent) = request { validators = sent }
        let current = state.withLock { [validators] state in
            state.validatorsSeen.append(validators?.etag)
            return state
        }
        if let holdUntil = current.holdUntil { try await clock.sleep(until: holdUntil) }
        if let failure = current.failure { throw failure }
        var info = ResponseInfo(answeredBy: name, origin: .remote)
        info.freshness = current.freshness
        if let etag = current.etag {
            info.freshness = info.freshness ?? ResponseFreshness()
            info.freshness?.validators.etag = etag
            if validators?.etag == etag {
                info.notModified = true
                let empty: StoreResponse.Result =
                    switch request.unconditional {
                    case .fetch: .fetched(.objects([]))
                    case .relationshipFault: .relationship(.toMany([]))
                    default: .object(nil)
                    }
                return StoreResponse(empty, info: info)
            }
        }
        var response = try await store.respond(to: request, context: context)
        response.info = info
        if case .fetch(let fetch) = request.unconditional, fetch.predicate == nil,
            let leftOut = current.listingsLeaveOut[fetch.entity], case .fetched(.objects(let nodes)) = response.result
        {
            response.result = .fetched(.objects(nodes.map { $0.leavingOut(leftOut) }))
        }
        if let held = current.answersHeldUntil, request.unconditional.kind != .save {
            state.withLock { $0.heldAnswers += 1 }
            try await clock.sleep(until: held)
        }
        if current.dumpsEverything, case .fetch = request.unconditional,
            case .fetched(.objects(let nodes)) = response.result
        {
            let known = Set(nodes.map(\.id)).union(response.related.map(\.id))
            let snapshot = store.snapshot
            for entity in store.model.entities.map(\.name) {
                response.related += snapshot.nodes(of: entity).filter { !known.contains($0.id) }
            }
            response.info.completeCollections = Set(store.model.entities.map(\.name))
        }
        return response
    }
}

/// A chain with one cache in front of a `FakeBackend`, on a manual clock.
struct CacheHarness {
    let clock: ManualClock
    let backend: FakeBackend
    let chain: Chain
    let directory: URL
    let handler: any StoreHandler
    var handlerName: String { handler.name }

    static func make(
        _ kind: CacheKind, ttl: Duration = .seconds(60), staleIfError: Duration? = .seconds(600),
        staleWhileRevalidate: Duration? = nil, maxObjects: Int = 10_000, directory: URL? = nil,
        log: CapturedLog? = nil, configure: (FakeBackend) -> Void = { _ in }
    ) throws -> CacheHarness {
        let clock = ManualClock()
        let backend = try FakeBackend(clock: clock)
        configure(backend)
        let directory = directory ?? TemporaryFolder.make("storechain")
        let options = CacheOptions(
            expiry: CacheExpiry(defaultTTL: ttl), staleIfError: staleIfError, staleWhileRevalidate: staleWhileRevalidate
        )
        let model = backend.store.model
        let handler: any StoreHandler =
            switch kind {
            case .memory: MemoryCache(model: model, limits: .init(maxObjects: maxObjects), options: options)
            case .disk:
                DiskCache(
                    model: model, path: directory.appending(path: "cache.sqlite").path, options: options,
                    logger: log?.logger() ?? Logger(label: "storechain.disk-cache"))
            #if Postgres
                case .postgres:
                    try PostgresCache(
                        model: model,
                        database: PostgresCacheDatabase(
                            url: try TestPostgres.url(), schema: TestPostgres.freshSchema()),
                        options: options, logger: log?.logger() ?? Logger(label: "storechain.postgres-cache"))
            #endif
            }
        let chain = Chain(
            handlers: [handler], terminal: backend, clock: clock, logger: log?.logger() ?? Logger(label: "storechain"))
        return CacheHarness(
            clock: clock, backend: backend, chain: chain, directory: directory, handler: handler)
    }

    /// Fetches through the chain with a policy.
    func fetch(_ request: FetchRequest, policy: CachePolicy? = nil) async throws -> StoreResponse {
        try await chain.send(.fetch(request), context: chain.makeContext(cachePolicy: policy))
    }

    /// What the backend itself holds for `request`: the oracle.
    func expected(_ request: FetchRequest) throws -> FetchResult {
        try backend.store.fetch(request)
    }
}

extension StoreResponse {
    var cacheStatus: CacheStatus? { info.cacheStatus }
}

/// A memory storage shared with another process, as far as a test needs: the test writes into
/// it what the other process's cache would, and tells of it as a PostgreSQL storage's notice does.
final class SharedMemoryStorage: ForwardingCacheStorage {
    let inner = MemoryCacheStorage()
    private let notices = AsyncStream<ChangeEvent>.makeStream()

    /// Another process changed what this storage holds, and says so.
    func changedElsewhere(_ write: CacheWrite, _ change: ChangeEvent) async throws {
        _ = await inner.write(write)
        notices.continuation.yield(change)
    }

    func changesFromElsewhere() -> AsyncStream<ChangeEvent>? { notices.stream }
}

/// A storage whose next write waits, once `holdNextWrite()` is called, until `release()`: the
/// cache handler has decided to store an answer and is on its way to the storage.
final class WriteHoldingStorage<Inner: CacheStorage>: ForwardingCacheStorage {
    private struct State {
        var holdsNext = false
        var held: CheckedContinuation<Void, Never>?
    }

    let inner: Inner
    private let state = Watched(State())
    /// Whether the handler hears of other processes' changes through it; `false` stands for a
    /// notice that comes only after the held write.
    private let hearsOthers: Bool

    init(_ inner: Inner, hearsOthers: Bool = true) {
        self.inner = inner
        self.hearsOthers = hearsOthers
    }

    func changesFromElsewhere() -> AsyncStream<ChangeEvent>? {
        hearsOthers ? inner.changesFromElsewhere() : nil
    }

    /// The next write waits for `release()`; the writes after it pass.
    func holdNextWrite() {
        state.withLock { $0.holdsNext = true }
    }

    /// Returns once a write waits.
    func untilAWriteIsHeld() async throws {
        try await state.wait(for: "a write held by the storage") { $0.held != nil }
    }

    /// Lets the held write through.
    func release() {
        state.withLock { state in
            defer { state.held = nil }
            return state.held
        }?.resume()
    }

    func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state in
                defer { state.holdsNext = false }
                if state.holdsNext { state.held = continuation }
                return state.holdsNext
            }
            if !holds { continuation.resume() }
        }
        return try await inner.write(write)
    }
}

/// Its handler keeps the order of saves of the storage it holds back writes for, as it would
/// over that storage directly.
extension WriteHoldingStorage: SaveOrderSharing where Inner: SaveOrderSharing {
    var saveOrder: SaveOrder { inner.saveOrder }
}

extension Node {
    /// The node without the values of `relationships` (not known, rather than empty).
    fileprivate func leavingOut(_ relationships: Set<String>) -> Node {
        var node = self
        for name in relationships { node.relationships[name] = nil }
        return node
    }
}
