import Foundation

/// A value passed for `%@`, `%K`, `%d`, `%f` in a predicate format, or for a `$variable`.
public enum PredicateArgument: Sendable, Hashable {
    /// One value.
    case value(Value)
    /// A list of values (for `IN`).
    case array([Value])

    /// Makes an argument from any supported Swift value.
    public init(_ value: some PredicateArgumentConvertible) {
        self = value.predicateArgument
    }

    var expression: Operand {
        switch self {
        case .value(let value): .constant(value)
        case .array(let values): .array(values.map(Operand.constant))
        }
    }
}

/// Swift values that can be passed as predicate arguments: every `StoredValue` (`String`,
/// `Int`, `Double`, `Bool`, `Date`, `UUID`, `URL`, `Decimal`, `Data`, `Value`, optionals of
/// these) and arrays of them.
public protocol PredicateArgumentConvertible: Sendable {
    /// The value as a predicate argument.
    var predicateArgument: PredicateArgument { get }
}

/// Swift values that are a single attribute value, for the typed builder (`Key<T>`): the
/// values an attribute is read as and written from.
@available(*, deprecated, renamed: "StoredValue")
public typealias PredicateValueConvertible = StoredValue

extension StoredValue {
    /// The value as a predicate argument.
    public var predicateArgument: PredicateArgument { .value(storedValue) }
}

extension Optional: PredicateArgumentConvertible where Wrapped: StoredValue {}

extension Array: PredicateArgumentConvertible where Element: StoredValue {
    /// The values as a list argument (for `IN`).
    public var predicateArgument: PredicateArgument { .array(map(\.storedValue)) }
}

extension PredicateArgument: PredicateArgumentConvertible {
    /// The argument itself.
    public var predicateArgument: PredicateArgument { self }
}
