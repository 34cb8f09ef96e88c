/// Answers fetches over a dataset held in memory, with the reference evaluator.
///
/// This is the oracle: for the same data, every chain of handlers must return what this store
/// returns. Safe to use from many tasks; a fetch works on a snapshot, so it never blocks writers.
///
/// ```swift
/// let store = InMemoryStore(model: model, nodes: nodes)
/// let result = try store.fetch(FetchRequest(entity: "Band", fetchLimit: 10))
/// ```
public final class InMemoryStore: Sendable {
    /// The model of the objects it holds.
    public let model: ObjectModel
    /// Who answered, in `ResponseInfo`.
    public let name = "in-memory"
    private let dataset: Locked<Dataset>

    package init(model: ObjectModel, dataset: Dataset) {
        self.model = model
        self.dataset = Locked(dataset)
    }

    /// A store over `model` holding `nodes`.
    public convenience init(model: ObjectModel, nodes: [Node] = []) {
        self.init(model: model, dataset: Dataset(nodes))
    }

    /// Runs a fetch request.
    ///
    /// - Throws: `StoreChainError` when the request does not fit the model.
    public func fetch(_ request: FetchRequest) throws(StoreChainError) -> FetchResult {
        try execute(FetchPlan(request, model: model))
    }

    /// Runs an already validated plan.
    package func execute(_ plan: FetchPlan) -> FetchResult {
        let snapshot = self.snapshot
        return plan.execute(over: snapshot.nodes(of: plan.entity.name), source: snapshot)
    }

    /// The node with this ID, if the store holds it.
    public func node(for id: ObjectID) -> Node? {
        dataset.withLock { $0.node(for: id) }
    }

    /// A copy of everything the store holds at this moment.
    package var snapshot: Dataset {
        dataset.withLock { $0 }
    }

    /// Inserts or replaces nodes.
    package func upsert(_ nodes: [Node]) {
        dataset.withLock { dataset in
            for node in nodes { dataset.upsert(node) }
        }
    }

    /// Applies a save atomically: all of it, or (on error) none of it.
    ///
    /// - Throws: `.saveFailed` naming the object and what is wrong.
    public func save(_ changes: SaveChanges) throws(StoreChainError) -> SaveResult {
        try save(changes) { _ throws(StoreChainError) in }
    }

    /// Applies a save atomically, calling `persist` with its result (every changed object and
    /// every deleted ID) before anyone can see it. When `persist` throws, the store is left as
    /// it was and the error is rethrown: this is how a persistent store writes a save through.
    package func save(
        _ changes: SaveChanges, persist: (SaveResult) throws(StoreChainError) -> Void
    ) throws(StoreChainError) -> SaveResult {
        let applier = SaveApplier(model: model)
        return try dataset.withLock { dataset throws(StoreChainError) in
            var working = dataset
            let result = try applier.apply(changes, to: &working)
            try persist(result)
            dataset = working
            return result
        }
    }

    /// Removes the node with this ID; returns whether there was one.
    @discardableResult
    package func remove(_ id: ObjectID) -> Bool {
        dataset.withLock { $0.remove(id) }
    }
}
