/// Merges object faults for the same entity that arrive within a short window (or until a
/// batch is full) into one fetch by key (`key IN {…}`), which the remote adapter sends to a
/// batch endpoint such as `GET /tracks?ids=1,2,3`; each caller gets its own object, or `nil`
/// when the backend did not return it.
///
/// Only the entities in `BatchingOptions.entities` are batched (those whose backend can fetch
/// a list of keys in one request); other requests pass unchanged, and so does a batch of one.
///
/// ```swift
/// Chain(terminal: remote) { BatchingHandler(model: model, options: .init(entities: ["Track"])) }
/// ```
public final class BatchingHandler: StoreHandler {
    public let name = "batching"
    public let model: Model
    public let options: BatchingOptions

    private typealias Waiter = CheckedContinuation<StoreResponse, any Error>

    private struct Batch {
        var number: Int
        var ids: [ObjectID] = []
        var waiters: [ObjectID: [Waiter]] = [:]
    }

    private struct State {
        var open: [String: Batch] = [:]
        var nextNumber = 0
    }

    private let state = Locked(State())

    public init(model: Model, options: BatchingOptions) {
        self.model = model
        self.options = options
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: @escaping NextResponder) async throws
        -> StoreResponse
    {
        guard case .objectFault(let id) = request, id.key != nil, options.entities.contains(id.entity),
            model.entity(named: id.entity) != nil
        else { return try await next(request, context) }
        return try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let (full, opened) = state.withLock { state -> (Batch?, Int?) in
                var opened: Int?
                if state.open[id.entity] == nil {
                    state.open[id.entity] = Batch(number: state.nextNumber)
                    opened = state.nextNumber
                    state.nextNumber += 1
                }
                guard var batch = state.open[id.entity] else { return (nil, nil) }
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
                    try? await context.clock.sleep(for: self.options.window)
                    let due = self.state.withLock { state -> Batch? in
                        guard state.open[id.entity]?.number == opened else { return nil }
                        return state.open.removeValue(forKey: id.entity)
                    }
                    if let due { await self.send(due, context: context, next: next) }
                }
            }
        }
    }

    /// How many faults wait in the open batch for `entity` (for tests).
    func waitingCount(for entity: String) -> Int {
        state.withLock { $0.open[entity]?.waiters.values.reduce(0) { $0 + $1.count } ?? 0 }
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
        let keys = batch.ids.compactMap(\.key).map(Operand.constant)
        let fetch = FetchRequest(
            entity: entity.name, predicate: .comparison(Comparison(.keyPath([entity.key]), .in, .array(keys))))
        do {
            let response = try await next(.fetch(fetch), context)
            guard case .fetched(.objects(let nodes)) = response.result else {
                throw StoreChainError(
                    .invalidResponse, "'\(response.info.answeredBy)' answered a batch fetch with no objects")
            }
            let found = Dictionary(nodes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            var info = response.info
            info.metadata["batch"] = String(batch.ids.count)
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
    /// How long the first fault of a batch waits for others.
    public var window: Duration
    /// A batch this large is sent at once.
    public var maxBatch: Int

    public init(entities: Set<String>, window: Duration = .milliseconds(5), maxBatch: Int = 100) {
        self.entities = entities
        self.window = window
        self.maxBatch = max(1, maxBatch)
    }
}
