import Foundation

/// The identity of an object: its entity and its reference (the backend's key).
///
/// Inserted objects carry a temporary reference until a save returns the permanent key.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// How an object is referred to.
    public enum Reference: Sendable, Hashable {
        /// The backend's key.
        case key(Value)
        /// A placeholder for an object inserted locally and not yet saved.
        case temporary(UUID)
    }

    /// The entity the object belongs to.
    public let entity: String
    /// The backend's key, or a temporary reference for an object not saved yet.
    public let reference: Reference

    /// The ID of the object `reference` of `entity`.
    public init(entity: String, reference: Reference) {
        self.entity = entity
        self.reference = reference
    }

    /// A permanent ID for the object whose key is `key`.
    public init(entity: String, key: Value) {
        self.init(entity: entity, reference: .key(key))
    }

    /// A new temporary ID, unique in this process.
    public static func temporary(entity: String) -> ObjectID {
        ObjectID(entity: entity, reference: .temporary(UUID()))
    }

    /// Whether the object has no key from the backend yet (inserted, not saved).
    public var isTemporary: Bool {
        if case .temporary = reference { return true }
        return false
    }

    /// The backend's key, or `nil` for a temporary ID.
    public var key: Value? {
        if case .key(let key) = reference { return key }
        return nil
    }

    /// Hashes the reference alone. Objects of different entities seldom share a key in one
    /// table (equality still compares the entity), and every lookup on the hot paths (caches,
    /// contexts) no longer hashes the entity's name.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(reference)
    }

    /// `Band/42`, or `Band/temp:UUID` for a temporary ID.
    public var description: String {
        switch reference {
        case .key(let key): "\(entity)/\(key)"
        case .temporary(let uuid): "\(entity)/temp:\(uuid.uuidString)"
        }
    }
}
