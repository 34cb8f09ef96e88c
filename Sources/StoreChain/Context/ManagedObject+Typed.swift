import Foundation

/// A Swift type an attribute value can be read as and written from (generated entity types use
/// it): `let year: Int? = try await album.value("year")`, `try album.set(year, for: "year")`;
/// also what a predicate compares with (`Key<T>`, a format's `%@`).
public protocol StoredValue: PredicateArgumentConvertible {
    /// The value as this type, or `nil` when it holds another kind.
    init?(storedValue: Value)
    /// This value as an attribute value.
    var storedValue: Value { get }
}

extension Value: StoredValue {
    public init?(storedValue: Value) { self = storedValue }
    public var storedValue: Value { self }
}

extension String: StoredValue {
    public var storedValue: Value { .string(self) }

    public init?(storedValue: Value) {
        guard case .string(let value) = storedValue else { return nil }
        self = value
    }
}

extension Int: StoredValue {
    public var storedValue: Value { .integer(self) }

    public init?(storedValue: Value) {
        guard case .integer(let value) = storedValue else { return nil }
        self = value
    }
}

extension Double: StoredValue {
    public var storedValue: Value { .double(self) }

    public init?(storedValue: Value) {
        switch storedValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Decimal: StoredValue {
    public var storedValue: Value { .decimal(self) }

    public init?(storedValue: Value) {
        switch storedValue {
        case .decimal(let value): self = value
        case .integer(let value): self = Decimal(value)
        default: return nil
        }
    }
}

extension Bool: StoredValue {
    public var storedValue: Value { .bool(self) }

    public init?(storedValue: Value) {
        guard case .bool(let value) = storedValue else { return nil }
        self = value
    }
}

extension Date: StoredValue {
    public var storedValue: Value { .date(self) }

    public init?(storedValue: Value) {
        guard case .date(let value) = storedValue else { return nil }
        self = value
    }
}

extension Data: StoredValue {
    public var storedValue: Value { .data(self) }

    public init?(storedValue: Value) {
        guard case .data(let value) = storedValue else { return nil }
        self = value
    }
}

extension UUID: StoredValue {
    public var storedValue: Value { .uuid(self) }

    public init?(storedValue: Value) {
        guard case .uuid(let value) = storedValue else { return nil }
        self = value
    }
}

extension URL: StoredValue {
    public var storedValue: Value { .url(self) }

    public init?(storedValue: Value) {
        guard case .url(let value) = storedValue else { return nil }
        self = value
    }
}

extension JSONValue: StoredValue {
    public var storedValue: Value { .json(self) }

    public init?(storedValue: Value) {
        guard case .json(let value) = storedValue else { return nil }
        self = value
    }
}

extension Optional: StoredValue where Wrapped: StoredValue {
    public var storedValue: Value { self?.storedValue ?? .null }

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
                .typeMismatch, "\(objectID).\(name) holds \(value), which cannot be read as \(T.self)",
                suggestion: "read it with value(_:) or as an optional type")
        }
        return typed
    }

    /// An attribute's value as the Swift type the call site asks for, loading the object if it
    /// is a fault: `let year: Int? = try await album.value("year")`.
    ///
    /// - Throws: `type-mismatch` when the value is of another kind (or missing for a
    ///   non-optional type).
    public func value<T: StoredValue>(_ name: String) async throws -> T {
        try await value(name, as: T.self)
    }

    /// Changes an attribute to a Swift value: `try album.set(title, for: "title")`. The change
    /// is kept in the context until `save()`.
    ///
    /// - Throws: `.typeMismatch` when the value does not fit the attribute.
    public func set<T: StoredValue>(_ value: T, for name: String) throws(StoreChainError) {
        try set(value.storedValue, for: name)
    }
}

extension Value {
    /// A Swift value as an attribute value: `Value(title)`, `Value(year)` (`nil` is `.null`).
    public init(_ value: some StoredValue) {
        self = value.storedValue
    }

    /// The value as a Swift type, or `nil` when it holds another kind (numbers widen: an
    /// integer reads as a `Double` or a `Decimal`).
    public func `as`<T: StoredValue>(_ type: T.Type) -> T? {
        T(storedValue: self)
    }

    /// The value as an `Int`, or `nil` when it holds another kind.
    public var integerValue: Int? { Int(storedValue: self) }
    /// The value as a `Double` (an integer widens), or `nil` when it holds another kind.
    public var doubleValue: Double? { Double(storedValue: self) }
    /// The value as a `Decimal` (an integer widens), or `nil` when it holds another kind.
    public var decimalValue: Decimal? { Decimal(storedValue: self) }
    /// The value as a `Bool`, or `nil` when it holds another kind.
    public var boolValue: Bool? { Bool(storedValue: self) }
    /// The value as a `Date`, or `nil` when it holds another kind.
    public var dateValue: Date? { Date(storedValue: self) }
    /// The value as `Data`, or `nil` when it holds another kind.
    public var dataValue: Data? { Data(storedValue: self) }
    /// The value as a `UUID`, or `nil` when it holds another kind.
    public var uuidValue: UUID? { UUID(storedValue: self) }
    /// The value as a `URL`, or `nil` when it holds another kind.
    public var urlValue: URL? { URL(storedValue: self) }
}
