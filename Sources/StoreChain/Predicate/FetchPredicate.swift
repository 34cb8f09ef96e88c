/// A filter on objects: StoreChain's own predicate AST.
///
/// Parse it from NSPredicate's format syntax, build it with the typed builder, print it in a
/// canonical form (`format`) that parses back to the same value, evaluate it in memory, and
/// (in other modules) compile it to SQL or URL parameters.
///
/// ```swift
/// let predicate = try FetchPredicate("name ==[c] %@ AND year > 1990", "rue royale")
/// predicate.format   // name ==[c] "rue royale" AND year > 1990
/// ```
public indirect enum FetchPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE`: every object.
    case `true`
    /// `FALSEPREDICATE`: no object.
    case `false`
    /// All of the predicates hold.
    case and([FetchPredicate])
    /// At least one of the predicates holds.
    case or([FetchPredicate])
    /// The predicate does not hold.
    case not(FetchPredicate)
    /// A comparison of two operands.
    case comparison(Comparison)
}

/// One comparison: `[modifier] lhs operator[options] rhs`.
public struct Comparison: Sendable, Hashable {
    /// How a key path through a to-many relationship is compared.
    public enum Modifier: String, Sendable, Hashable, CaseIterable {
        /// The key path leads to one value.
        case direct = ""
        /// At least one of the values matches (`ANY`, also written `SOME`).
        case any = "ANY"
        /// Every value matches; true for none.
        case all = "ALL"
        /// No value matches; true for none.
        case none = "NONE"
    }

    /// How two operands are compared.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `==`
        case equal = "=="
        /// `!=`
        case notEqual = "!="
        /// `<`
        case less = "<"
        /// `<=`
        case lessOrEqual = "<="
        /// `>`
        case greater = ">"
        /// `>=`
        case greaterOrEqual = ">="
        /// `BEGINSWITH`: the string starts with the other.
        case beginsWith = "BEGINSWITH"
        /// `ENDSWITH`: the string ends with the other.
        case endsWith = "ENDSWITH"
        /// `CONTAINS`: the string holds the other, or the collection holds the value.
        case contains = "CONTAINS"
        /// Whole-string match with `*` (any run) and `?` (one character) wildcards.
        case like = "LIKE"
        /// Whole-string regular expression match.
        case matches = "MATCHES"
        /// Membership in an array (`year IN {1990, 1991}`).
        case `in` = "IN"
        /// Inclusive range (`year BETWEEN {1990, 1999}`).
        case between = "BETWEEN"

        /// Operators that only apply to strings.
        package var isStringOperator: Bool {
            switch self {
            case .beginsWith, .endsWith, .contains, .like, .matches: true
            default: false
            }
        }

        package var isOrdering: Bool {
            switch self {
            case .less, .lessOrEqual, .greater, .greaterOrEqual, .between: true
            default: false
            }
        }
    }

    /// `[c]` case-insensitive and `[d]` diacritic-insensitive string comparison.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// `[c]`: letters compare without case.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: letters compare without diacritics.
        public static let diacriticInsensitive = Options(rawValue: 2)
    }

    /// `ANY`, `ALL`, `NONE` over a to-many key path, or a direct comparison.
    public var modifier: Modifier
    /// The left side.
    public var lhs: Operand
    /// The operator.
    public var op: Operator
    /// The right side.
    public var rhs: Operand
    /// The `[c]` and `[d]` options of a string comparison.
    public var options: Options

    /// `lhs op rhs`, with options and a quantifier when given.
    public init(
        _ lhs: Operand, _ op: Operator, _ rhs: Operand, options: Options = [],
        modifier: Modifier = .direct
    ) {
        self.modifier = modifier
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.options = options
    }
}

/// One side of a comparison.
public indirect enum Operand: Sendable, Hashable {
    /// A key path from the evaluated object, through to-one or to-many relationships.
    case keyPath([String])
    /// A value.
    case constant(Value)
    /// An array literal `{1, 2, 3}`, for `IN` and `BETWEEN`.
    case array([Operand])
    /// `$name`, replaced by `FetchPredicate.substituting(_:)` before evaluation.
    case variable(String)
    /// `albums.@count`, `albums.@sum.price`: a function over the values of a to-many key path.
    case aggregate(Aggregate, collection: [String], property: [String])

    /// A function over a to-many key path's values.
    public enum Aggregate: String, Sendable, Hashable, CaseIterable {
        /// `@count`, `@sum`, `@min`, `@max`, `@avg`.
        case count, sum, min, max, avg
    }
}

extension FetchPredicate {
    /// `lhs AND rhs`, flattening nested `AND`s.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case (.and(let left), .and(let right)): .and(left + right)
        case (.and(let left), _): .and(left + [rhs])
        case (_, .and(let right)): .and([lhs] + right)
        default: .and([lhs, rhs])
        }
    }

    /// `lhs OR rhs`, flattening nested `OR`s.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case (.or(let left), .or(let right)): .or(left + right)
        case (.or(let left), _): .or(left + [rhs])
        case (_, .or(let right)): .or([lhs] + right)
        default: .or([lhs, rhs])
        }
    }

    /// `NOT predicate`.
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate {
        .not(predicate)
    }
}

extension FetchPredicate {
    /// How many levels of `NOT`, `AND` and `OR` this predicate nests (a comparison is 0).
    package var nestingDepth: Int {
        switch self {
        case .true, .false, .comparison: 0
        case .not(let operand): 1 + operand.nestingDepth
        case .and(let operands), .or(let operands): 1 + (operands.map(\.nestingDepth).max() ?? 0)
        }
    }
}
