import Foundation

/// A Swift type an attribute value can be read as (generated entity types use it).
public protocol StoredValue: Sendable {
    /// The value as this type, or `nil` when it holds another kind.
    init?(storedValue: Value)
}

extension String: StoredValue {
    public init?(storedValue: Value) {
        guard case .string(let value) = storedValue else { return nil }
        self = value
    }
}

extension Int: StoredValue {
    public init?(storedValue: Value) {
        guard case .integer(let value) = storedValue else { return nil }
        self = value
    }
}

extension Double: StoredValue {
    public init?(storedValue: Value) {
        switch storedValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Decimal: StoredValue {
    public init?(storedValue: Value) {
        switch storedValue {
        case .decimal(let value): self = value
        case .integer(let value): self = Decimal(value)
        default: return nil
        }
    }
}

extension Bool: StoredValue {
    public init?(storedValue: Value) {
        guard case .bool(let value) = storedValue else { return nil }
        self = value
    }
}

extension Date: StoredValue {
    public init?(storedValue: Value) {
        guard case .date(let value) = storedValue else { return nil }
        self = value
    }
}

extension Data: StoredValue {
    public init?(storedValue: Value) {
        guard case .data(let value) = storedValue else { return nil }
        self = value
    }
}

extension UUID: StoredValue {
    public init?(storedValue: Value) {
        guard case .uuid(let value) = storedValue else { return nil }
        self = value
    }
}

extension URL: StoredValue {
    public init?(storedValue: Value) {
        guard case .url(let value) = storedValue else { return nil }
        self = value
    }
}

extension JSONValue: StoredValue {
    public init?(storedValue: Value) {
        guard case .json(let value) = storedValue else { return nil }
        self = value
    }
}

extension Optional: StoredValue where Wrapped: StoredValue {
    public init?(storedValue: Value) {
        if storedValue.isNull {
            self = .none
        } else if let value = Wrapped(storedValue: storedValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

extension ManagedObject {
    /// An attribute's value as a Swift type, loading the object if it is a fault.
    ///
    /// - Throws: `type-mismatch` when the value is of another kind (or missing for a
    ///   non-optional type).
    public func value<T: StoredValue>(_ name: String, as type: T.Type) async throws -> T {
        let value = try await self.value(name)
        guard let typed = T(storedValue: value) else {
            throw StoreChainError(
                .typeMismatch, "\(objectID).\(name) holds \(value), not a \(T.self)",
                suggestion: "read it with value(_:) or as an optional type")
        }
        return typed
    }
}
