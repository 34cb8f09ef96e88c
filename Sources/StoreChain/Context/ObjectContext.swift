import Foundation

/// The app's object graph over a chain: fetches give managed objects, reads fault values in,
/// changes are tracked and saved together, and `observe` streams results as they change.
///
/// A context is safe to use from many tasks at once, and its objects may be passed between
/// tasks. It keeps the values that arrived with fetches in a row cache, so reading them does not
/// go to the chain again; values it has not seen are asked of the chain (which may answer from
/// a cache).
///
/// ```swift
/// let context = ObjectContext(chain: chain, model: model)
/// let bands = try await context.fetch(FetchRequest(entity: "Band", relationshipKeyPathsForPrefetching: ["albums"]))
/// let album = try context.insert("Album", values: ["title": "New", "year": 2026])
/// try album.setRelated(bands[0], for: "band")
/// try await context.save()   // album.objectID is now permanent
/// ```
public final class ObjectContext: Sendable {
    /// The chain every fetch, fault and save goes through.
    public let chain: Chain
    /// The model the context's objects belong to.
    public let model: ObjectModel
    /// Identifies this context's own saves in change events.
    public let name: String
    let state = Locked(ContextState())
    let saveLock = AsyncLock()
    let mergeProgress = MergeProgress()

    /// How many faults of one entity fire together when one of them is used; `nil` takes the
    /// batch size of the chain's `BatchingHandler` for that entity (one when none batches it).
    public let faultBatchSize: Int?

    /// An object graph over `chain`.
    ///
    /// - Parameters:
    ///   - chain: The chain every fetch, fault and save goes through.
    ///   - model: The model of the objects (usually the pipeline's).
    ///   - name: Names the context as the sender of its requests, so it can tell its own change
    ///     events from others'.
    ///   - faultBatchSize: When one object of a relationship is first used, this many of its
    ///     not-yet-loaded neighbours load with it (sent together, so a batching handler merges
    ///     them into one request). `nil` follows the chain's batching handler.
    public init(
        chain: Chain, model: ObjectModel, name: String = "context-\(UUID().uuidString)", faultBatchSize: Int? = nil
    ) {
        self.chain = chain
        self.model = model
        self.name = name
        self.faultBatchSize = faultBatchSize.map { max(1, $0) }
        startMergingEvents()
    }

    func makeRequestContext() -> RequestContext {
        var context = chain.makeContext()
        context.sender = name
        return context
    }

    /// The object with this ID: the registered one, or a fault that loads on first use.
    public func object(with id: ObjectID) -> ManagedObject {
        state.withLock { $0.object(for: id, context: self) }
    }

    /// The objects with these IDs, in order; those not loaded are faults that load in batches
    /// (see `faultBatchSize`) as they are used.
    public func objects(with ids: [ObjectID]) -> [ManagedObject] {
        state.withLock { state in
            let objects = ids.map { state.object(for: $0, context: self) }
            state.faultGroups.register(ids.filter { state.isFault($0) })
            return objects
        }
    }

    // MARK: Fetching

    /// Fetches managed objects. Relationship key paths named for prefetching are loaded with
    /// the fetch, so following them does not fault each object.
    public func fetch(_ request: FetchRequest) async throws -> [ManagedObject] {
        var request = request
        request.resultType = .objects
        let events = state.withLock { $0.table.events }
        let response = try await chain.send(.fetch(request), context: makeRequestContext())
        guard case .objects(let nodes) = try response.fetchResult() else {
            throw StoreChainError(.invalidResponse, "'\(response.info.answeredBy)' did not answer a fetch with objects")
        }
        return state.withLock { state in
            let objects = state.absorbObjects(nodes, asOf: events, context: self)
            state.absorb(response.related, asOf: events)
            return objects
        }
    }

    /// How many objects the request would return.
    public func count(for request: FetchRequest) async throws -> Int {
        var request = request
        request.resultType = .count
        guard
            case .count(let count) = try await chain.send(.fetch(request), context: makeRequestContext()).fetchResult()
        else { throw StoreChainError(.invalidResponse, "a count fetch did not return a count") }
        return count
    }

    /// The IDs of the objects the request would return, without loading the objects.
    public func objectIDs(for request: FetchRequest) async throws -> [ObjectID] {
        var request = request
        request.resultType = .objectIDs
        let result = try await chain.send(.fetch(request), context: makeRequestContext()).fetchResult()
        switch result {
        case .objectIDs(let ids): return ids
        case .objects(let nodes): return nodes.map(\.id)
        default: throw StoreChainError(.invalidResponse, "an object-ID fetch did not return IDs")
        }
    }

    /// Dictionaries of the named properties (attributes, or key paths through to-one
    /// relationships) of the objects the request would return.
    public func dictionaries(for request: FetchRequest, properties: [String]) async throws -> [[String: Value]] {
        var request = request
        request.resultType = .dictionaries(properties)
        guard
            case .dictionaries(let rows) = try await chain.send(.fetch(request), context: makeRequestContext())
                .fetchResult()
        else { throw StoreChainError(.invalidResponse, "a dictionary fetch did not return dictionaries") }
        return rows
    }

    // MARK: Changes

    /// Inserts a new object with Swift values (`["title": title, "year": year]`, variables or
    /// literals); it gets its permanent ID when saved.
    ///
    /// - Throws: `.unknownEntity`, or `.typeMismatch` / `.unknownKeyPath` for a bad value.
    public func insert(_ entityName: String, values: [String: any StoredValue]) throws(StoreChainError)
        -> ManagedObject
    {
        try insert(entityName, values: values.mapValues(\.storedValue))
    }

    /// Inserts a new object with a temporary ID; it gets its permanent ID when saved.
    ///
    /// - Throws: `.unknownEntity`, or `.typeMismatch` / `.unknownKeyPath` for a bad value.
    public func insert(_ entityName: String, values: [String: Value] = [:]) throws(StoreChainError) -> ManagedObject {
        let entity = try model.requireEntity(entityName)
        for (name, value) in values { _ = try checked(value, for: name, in: entity) }
        return state.withLock { state in
            let object = state.object(for: .temporary(entity: entityName), context: self)
            state.pending[object.objectID] = PendingChange(kind: .inserted, attributes: values, object: object)
            return object
        }
    }

    /// Marks an object of a generated type for deletion when the context is saved (see
    /// `delete(_:)` for an untyped object).
    public func delete(_ object: some TypedObject) {
        delete(object.object)
    }

    /// Marks an object for deletion when the context is saved; deleting a new object just
    /// forgets it.
    public func delete(_ object: ManagedObject) {
        state.withLock { state in
            let id = object.objectID
            if state.pending[id]?.kind == .inserted {
                state.pending.removeValue(forKey: id)
                state.table.forget(id)
            } else {
                state.pending[id] = PendingChange(kind: .deleted, object: object)
            }
        }
    }

    /// Whether there are unsaved changes.
    public var hasChanges: Bool {
        state.withLock { !$0.pending.isEmpty }
    }

    /// Forgets every unsaved change.
    public func rollback() {
        state.withLock { state in
            for (id, change) in state.pending where change.kind == .inserted { state.table.forget(id) }
            state.pending.removeAll()
        }
    }

    func isUnsent(_ object: ManagedObject) -> Bool {
        state.withLock { $0.unsent[object.objectID] != nil }
    }

    func pendingKind(of object: ManagedObject) -> PendingChange.Kind? {
        state.withLock { $0.pending[object.objectID]?.kind }
    }

    func checked(_ value: Value, for name: String, in entity: EntityDescription) throws(StoreChainError) -> Value {
        guard let attribute = entity.attribute(named: name) else {
            throw StoreChainError(
                .unknownKeyPath, "entity '\(entity.name)' has no attribute '\(name)'",
                suggestion: Suggestion.didYouMean(name, in: entity.attributes.map(\.name)))
        }
        switch (attribute.type, value) {
        case (_, .null):
            guard attribute.isOptional || attribute.defaultValue != nil else {
                throw StoreChainError(
                    .typeMismatch, "attribute '\(entity.name).\(name)' is required and cannot be nil")
            }
            return value
        case (.double, .integer(let number)): return .double(Double(number))
        case (.decimal, .integer(let number)): return .decimal(Decimal(number))
        default:
            guard value.type == attribute.type else {
                throw StoreChainError(
                    .typeMismatch,
                    "attribute '\(entity.name).\(name)' is \(attribute.type.rawValue), but the value is \(value.type?.rawValue ?? "nil") \(value)"
                )
            }
            return value
        }
    }
}
