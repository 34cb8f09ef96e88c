extension ManagedObject {
    /// The object a to-one relationship points to, as its typed wrapper.
    ///
    /// - Throws: `type-mismatch` when it is an object of another entity.
    public func related<T: TypedObject>(_ name: String, as type: T.Type) async throws -> T? {
        guard let object = try await related(name) else { return nil }
        return try typed(object, in: name)
    }

    /// The object a required to-one relationship points to, as its typed wrapper.
    ///
    /// - Throws: `invalid-data` when it points to nothing (it was emptied and not yet set
    ///   again), `type-mismatch` for an object of another entity.
    public func requiredRelated<T: TypedObject>(_ name: String, as type: T.Type) async throws -> T {
        guard let object = try await related(name) else {
            throw StoreChainError(
                .invalidData, "\(objectID).\(name) is required but holds no \(T.entityName)",
                suggestion: "set it before reading or saving, or mark it optional with '?' in the model")
        }
        return try typed(object, in: name)
    }

    /// The objects a to-many relationship holds, as their typed wrappers.
    ///
    /// - Throws: `type-mismatch` when one is an object of another entity.
    public func relatedObjects<T: TypedObject>(_ name: String, as type: T.Type) async throws -> [T] {
        var typedObjects: [T] = []
        for object in try await relatedObjects(name) { typedObjects.append(try typed(object, in: name)) }
        return typedObjects
    }

    private func typed<T: TypedObject>(_ object: ManagedObject, in name: String) throws(StoreChainError) -> T {
        guard let typedObject = T(object) else {
            throw StoreChainError(
                .typeMismatch, "\(objectID).\(name) holds \(object.objectID), which is not a \(T.entityName)",
                suggestion: "regenerate the typed code from the model the context uses")
        }
        return typedObject
    }
}
