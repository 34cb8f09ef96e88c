import Foundation

/// Merges object faults for the same entity that arrive close together (until no fault has
/// joined for `BatchingOptions.window`, the batch is full, or `BatchingOptions.maxDelay` has
/// passed since the first) into one fetch by key (`key IN {…}`), which the remote adapter sends to a
/// batch endpoint such as `GET /tracks?ids=1,2,3`; each caller gets its own object, or `nil`
/// when the backend did not return it.
///
/// Only the entities in `BatchingOptions.entities` are batched (those whose backend can fetch
/// a list of keys in one request); other requests pass unchanged, and so does a batch of one.
///
/// ```swift
/// Chain(terminal: remote) { BatchingHandler(model: model, options: .init(entities: ["Track"])) }
/// ```
public final class BatchingHandler: FaultBatching {
    public let name = "batching"
    /// The model whose entities it batches.
    public let model: ObjectModel
    /// Which entities, how long a batch waits, and how large it grows.
    public let options: BatchingOptions

    public func faultBatchSize(for entity: String) -> Int? {
        options.entities.contains(entity) ? options.maxBatch : nil
    }

    private typealias Waiter = CheckedContinuation<StoreResponse, any Error>

    private struct Batch {
        var number: Int
        /// When the first and the latest fault joined.
        var opened: Date
        var lastJoined: Date
        var ids: [ObjectID] = []
        var waiters: [ObjectID: [Waiter]] = [:]
    }

    private struct State {
        var open: [String: Batch] = [:]
        var nextNumber = 0
    }

    private let state = Watched(State())

    /// A handler batching the faults of `options.entities`.
    public init(model: ObjectModel, options: BatchingOptions) {
        self.model = model
        self.options = options
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        guard case .objectFault(let id) = request, id.key != nil, options.entities.contains(id.entity),
            model.entity(named: id.entity) != nil
        else { return try await next(request, context) }
        let now = context.clock.now
        return try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let (full, opened) = state.withLock { state -> (Batch?, Int?) in
                var opened: Int?
                if state.open[id.entity] == nil {
                    state.open[id.entity] = Batch(number: state.nextNumber, opened: now, lastJoined: now)
                    opened = state.nextNumber
                    state.nextNumber += 1
                }
                guard var batch = state.open[id.entity] else { return (nil, nil) }
                batch.lastJoined = max(batch.lastJoined, now)
                if batch.waiters[id] == nil { batch.ids.append(id) }
                batch.waiters[id, default: []].append(waiter)
                if batch.ids.count >= options.maxBatch {
                    state.open[id.entity] = nil
                    return (batch, opened)
                }
                state.open[id.entity] = batch
                return (nil, opened)
            }
            if let full {
                run(in: context) { await self.send(full, context: context, next: next) }
            } else if let opened {
                run(in: context) {
                    if let due = await self.closing(batch: opened, of: id.entity, clock: context.clock) {
                        await self.send(due, context: context, next: next)
                    }
                }
            }
        }
    }

    /// Waits until batch `number` of `entity` is due (no fault joined it for a window, or it has
    /// waited `maxDelay`) and takes it out of the open batches; `nil` when it was sent full.
    /// The window restarts with every fault that joins, so a burst whose faults arrive slowly
    /// (each after a cache lookup, on a busy machine) still goes as one batch.
    private func closing(batch number: Int, of entity: String, clock: any StoreClock) async -> Batch? {
        var deadline = clock.now.addingTimeInterval(options.window.timeInterval)
        while true {
            try? await clock.sleep(until: deadline)
            let (due, later) = state.withLock { state -> (Batch?, Date?) in
                guard let batch = state.open[entity], batch.number == number else { return (nil, nil) }
                let latest = batch.opened.addingTimeInterval(options.maxDelay.timeInterval)
                let quiet = batch.lastJoined.addingTimeInterval(options.window.timeInterval)
                let next = min(quiet, latest)
                if next > clock.now, !Task.isCancelled { return (nil, next) }
                return (state.open.removeValue(forKey: entity), nil)
            }
            guard let later else { return due }
            deadline = later
        }
    }

    /// Returns once at least `count` faults wait in the open batch for `entity` (for tests; see
    /// `Watched.wait`).
    func waitForWaiting(_ count: Int, for entity: String) async throws {
        try await state.wait(for: "\(count) faults waiting in the open batch of \(entity)") {
            $0.open[entity]?.waiters.values.reduce(0) { $0 + $1.count } ?? 0 >= count
        }
    }

    /// Runs batch work as the chain's background work, or on its own once the chain is shut down.
    private func run(in context: RequestContext, _ work: @escaping @Sendable () async -> Void) {
        if !context.background.run(work) { Task { await work() } }
    }

    /// Sends one batch and hands each waiter its own answer.
    private func send(_ batch: Batch, context: RequestContext, next: NextResponder) async {
        guard batch.ids.count > 1, let first = batch.ids.first, let entity = model.entity(named: first.entity) else {
            for (id, waiters) in batch.waiters {
                let result = await Result(catching: { try await next(.objectFault(id), context) })
                for waiter in waiters { waiter.resume(with: result) }
            }
            return
        }
        // In key order, so that the same keys make the same request (and cache key) whatever
        // order the faults arrived in.
        let keys = batch.ids.compactMap(\.key).sorted { Value.sortCompare($0, $1) < 0 }.map(Operand.constant)
        let fetch = FetchRequest(
            entity: entity.name, predicate: .comparison(Comparison(.keyPath([entity.key]), .in, .array(keys))))
        do {
            let response = try await context.withSpan("storechain.batch") { span in
                span?.attributes["storechain.entity"] = entity.name
                span?.attributes["storechain.batch.size"] = batch.ids.count
                // A fetch like any other, through the chain from the top: the caches answer what
                // they hold and keep the rest, and the pager reads its pages.
                return try await context.subrequestThroughChain(.fetch(fetch), serving: .objectFault(first))
            }
            guard case .fetched(.objects(let nodes)) = response.result else {
                throw StoreChainError(
                    .invalidResponse, "'\(response.info.answeredBy)' answered a batch fetch with no objects")
            }
            let found = Dictionary(nodes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            var info = response.info
            info.batchSize = batch.ids.count
            for (id, waiters) in batch.waiters {
                for waiter in waiters {
                    waiter.resume(returning: StoreResponse(.object(found[id]), related: response.related, info: info))
                }
            }
        } catch {
            for waiter in batch.waiters.values.joined() { waiter.resume(throwing: error) }
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

/// How `BatchingHandler` batches.
public struct BatchingOptions: Sendable, Hashable {
    /// The entities whose backend fetches a list of keys in one request.
    public var entities: Set<String>
    /// How long a batch waits for another fault to join; the wait starts again with each fault
    /// that joins.
    public var window: Duration
    /// A batch this large is sent at once.
    public var maxBatch: Int
    /// The longest a batch waits after its first fault, however many keep joining.
    public var maxDelay: Duration

    /// Options for `entities`, each with the default the pipeline reference names.
    public init(
        entities: Set<String>, window: Duration = .milliseconds(5), maxBatch: Int = 100,
        maxDelay: Duration = .milliseconds(50)
    ) {
        self.entities = entities
        self.window = window
        self.maxBatch = max(1, maxBatch)
        self.maxDelay = max(window, maxDelay)
    }
}

extension BatchingOptions: Decodable {
    private enum CodingKeys: String, CodingKey {
        case entities, window, maxBatch, maxDelay
    }

    /// Reads `{ entities: [Track], window: 5ms, max-batch: 100, max-delay: 50ms }` (`entities`
    /// required); a key left out keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = BatchingOptions(entities: Set(try container.decode([String].self, forKey: .entities)))
        self.init(
            entities: defaults.entities,
            window: try container.decodeIfPresent(TimeSpan.self, forKey: .window)?.duration ?? defaults.window,
            maxBatch: try container.decodeIfPresent(PositiveCount.self, forKey: .maxBatch)?.value ?? defaults.maxBatch,
            maxDelay: try container.decodeIfPresent(TimeSpan.self, forKey: .maxDelay)?.duration ?? defaults.maxDelay)
    }
}
