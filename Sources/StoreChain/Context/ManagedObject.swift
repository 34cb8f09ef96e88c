/// An object in an `ObjectContext`: a handle on one object's values, faulting them in through
/// the chain when they are not loaded yet.
///
/// Within one context, one `ObjectID` always gives the same `ManagedObject` while it is in use.
/// Objects are `Sendable`: pass them between tasks freely.
///
/// ```swift
/// let band = try await context.fetch(FetchRequest(entity: "Band", fetchLimit: 1))[0]
/// let name = try await band.value("name")
/// for album in try await band.relatedObjects("albums") { print(try await album.value("title")) }
/// try band.set("Rue Royale", for: "name")
/// try await context.save()
/// ```
public final class ManagedObject: Sendable, Hashable, CustomStringConvertible {
    /// The context the object belongs to.
    public let context: ObjectContext
    private let identity: Locked<ObjectID>
    /// Where the context keeps this object's row (see `ObjectTable`).
    let slot: Int
    /// The position of its entity in the context's model (`nil` when the model has no such
    /// entity); an object's entity never changes.
    let entityPosition: Int?

    init(id: ObjectID, slot: Int, entityPosition: Int?, context: ObjectContext) {
        self.identity = Locked(id)
        self.slot = slot
        self.entityPosition = entityPosition
        self.context = context
    }

    /// The object's ID; a temporary one until the object is first saved.
    public var objectID: ObjectID { identity.withLock { $0 } }

    func updateID(_ id: ObjectID) {
        identity.withLock { $0 = id }
    }

    /// The entity this object belongs to.
    public var entity: EntityDescription {
        get throws(StoreChainError) { try context.model.requireEntity(objectID.entity) }
    }

    /// An attribute's value, faulting the object in through the chain when it is not loaded.
    ///
    /// - Throws: `.unknownKeyPath` for a name the entity does not have; `.unavailable` when the
    ///   object no longer exists upstream.
    public func value(_ name: String) async throws -> Value {
        // A loaded value is read without an async call of its own.
        if let value = try context.loadedValue(of: self, name) { return value }
        return try await context.faultedValue(of: self, name)
    }

    /// An attribute's value if it is loaded, without going to the chain.
    public func cachedValue(_ name: String) -> Value? {
        context.cachedValue(of: self, name)
    }

    /// Every attribute's value as the context holds it (unsaved changes included), read at
    /// once; `nil` while the object is a fault.
    public var loadedValues: [String: Value]? {
        context.loadedValues(of: self)
    }

    /// Every attribute's value, faulting the object in through the chain first when needed.
    ///
    /// - Throws: `.unavailable` when the object no longer exists upstream.
    public func loadValues() async throws -> [String: Value] {
        if let values = loadedValues { return values }
        // Faulted in whichever attribute is read (the key alone would be answered from the ID).
        if let attribute = try entity.attributes.first { _ = try await context.faultedValue(of: self, attribute.name) }
        guard let values = loadedValues else {
            throw StoreChainError(
                .incompleteData, "\(objectID) was loaded without all of its attributes",
                suggestion: "read each value with value(_:), which faults it in")
        }
        return values
    }

    /// Changes an attribute. The change is kept in the context until `save()`.
    ///
    /// - Throws: `.typeMismatch` when the value does not fit the attribute.
    public func set(_ value: Value, for name: String) throws(StoreChainError) {
        try context.set(value, for: name, of: self)
    }

    /// The object a to-one relationship holds, faulting it in when needed.
    public func related(_ name: String) async throws -> ManagedObject? {
        try await context.related(name, of: self).first
    }

    /// The objects a to-many relationship holds, in order, faulting them in when needed.
    public func relatedObjects(_ name: String) async throws -> [ManagedObject] {
        try await context.related(name, of: self)
    }

    /// Sets a to-one relationship; the inverse on the other side is kept in step.
    public func setRelated(_ object: ManagedObject?, for name: String) throws(StoreChainError) {
        try context.setRelationship(name, of: self, to: object.map { [$0] } ?? [], toMany: false)
    }

    /// Sets a to-many relationship; inverses are kept in step.
    public func setRelatedObjects(_ objects: [ManagedObject], for name: String) throws(StoreChainError) {
        try context.setRelationship(name, of: self, to: objects, toMany: true)
    }

    /// Whether no values are loaded yet: the next read goes to the chain.
    public var isFault: Bool { context.isFault(self) }
    /// Whether the object was inserted and that is not saved yet.
    public var isInserted: Bool { context.pendingKind(of: self) == .inserted }
    /// Whether the object has changes not saved yet.
    public var isUpdated: Bool { context.pendingKind(of: self) == .updated }
    /// Whether the object was deleted and that is not saved yet.
    public var isDeleted: Bool { context.pendingKind(of: self) == .deleted }
    /// Whether the object was inserted, changed or deleted and that is not saved yet.
    public var hasChanges: Bool { context.pendingKind(of: self) != nil }
    /// Whether this object's saved changes have not reached the backend yet: an outbox
    /// acknowledged the save while the backend could not be reached and sends it later.
    public var hasUnsentChanges: Bool { context.isUnsent(self) }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    public var description: String { "<\(objectID)>" }
}
