import Foundation

/// A value passed for `%@`, `%K`, `%d`, `%f` in a predicate format, or for a `$variable`.
public enum PredicateArgument: Sendable, Hashable {
    case value(Value)
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

/// Swift values that can be passed as predicate arguments: `String`, `Int`, `Double`, `Bool`,
/// `Date`, `UUID`, `URL`, `Decimal`, `Data`, `Value`, optionals and arrays of these.
public protocol PredicateArgumentConvertible: Sendable {
    var predicateArgument: PredicateArgument { get }
}

/// Swift values that are a single attribute value; used by the typed builder.
public protocol PredicateValueConvertible: PredicateArgumentConvertible {
    var predicateValue: Value { get }
}

extension PredicateValueConvertible {
    public var predicateArgument: PredicateArgument { .value(predicateValue) }
}

extension Value: PredicateValueConvertible {
    public var predicateValue: Value { self }
}

extension String: PredicateValueConvertible {
    public var predicateValue: Value { .string(self) }
}

extension Int: PredicateValueConvertible {
    public var predicateValue: Value { .integer(self) }
}

extension Double: PredicateValueConvertible {
    public var predicateValue: Value { .double(self) }
}

extension Bool: PredicateValueConvertible {
    public var predicateValue: Value { .bool(self) }
}

extension Date: PredicateValueConvertible {
    public var predicateValue: Value { .date(self) }
}

extension UUID: PredicateValueConvertible {
    public var predicateValue: Value { .uuid(self) }
}

extension URL: PredicateValueConvertible {
    public var predicateValue: Value { .url(self) }
}

extension Decimal: PredicateValueConvertible {
    public var predicateValue: Value { .decimal(self) }
}

extension Data: PredicateValueConvertible {
    public var predicateValue: Value { .data(self) }
}

extension Optional: PredicateArgumentConvertible where Wrapped: PredicateValueConvertible {
    public var predicateArgument: PredicateArgument { .value(predicateValue) }
}

extension Optional: PredicateValueConvertible where Wrapped: PredicateValueConvertible {
    public var predicateValue: Value { self?.predicateValue ?? .null }
}

extension Array: PredicateArgumentConvertible where Element: PredicateValueConvertible {
    public var predicateArgument: PredicateArgument { .array(map(\.predicateValue)) }
}

extension PredicateArgument: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { self }
}
