/// Checks a predicate against an entity before any work is done, and binds its constants to
/// the attribute types they are compared with (`"1990-01-01"` compared with a date attribute
/// becomes a date). What it returns is what the evaluator, SQL and URL compilers accept.
enum PredicateValidator {
    /// What an expression leads to, for type checks.
    enum Shape: Equatable {
        /// One value; `nil` type for the `nil` constant.
        case single(AttributeType?)
        /// Many values, through a to-many relationship.
        case collection(AttributeType)
        case array([AttributeType?])
        case toOneRelationship
        case toManyRelationship
    }

    static func bind(_ predicate: FetchPredicate, entity: EntityDescription, model: ObjectModel) throws(StoreChainError)
        -> FetchPredicate
    {
        switch predicate {
        case .true, .false: return predicate
        case .and(let operands):
            var bound: [FetchPredicate] = []
            for operand in operands { bound.append(try bind(operand, entity: entity, model: model)) }
            return .and(bound)
        case .or(let operands):
            var bound: [FetchPredicate] = []
            for operand in operands { bound.append(try bind(operand, entity: entity, model: model)) }
            return .or(bound)
        case .not(let operand): return .not(try bind(operand, entity: entity, model: model))
        case .comparison(let comparison):
            do {
                return .comparison(try bind(comparison, entity: entity, model: model))
            } catch {
                var located = error
                located.message = "in '\(comparison)': " + error.message
                located.location = located.location ?? .init(path: "predicate")
                throw located
            }
        }
    }

    private static func bind(_ comparison: Comparison, entity: EntityDescription, model: ObjectModel)
        throws(StoreChainError)
        -> Comparison
    {
        var result = comparison
        let lhs = try shape(of: comparison.lhs, entity: entity, model: model)
        let rhs = try shape(of: comparison.rhs, entity: entity, model: model)
        try checkModifier(comparison, lhs: lhs, rhs: rhs)
        let op = comparison.op

        if lhs == .toOneRelationship || rhs == .toOneRelationship {
            let other = lhs == .toOneRelationship ? rhs : lhs
            guard op == .equal || op == .notEqual, other == .single(nil) else {
                throw mismatch(
                    "a to-one relationship can only be compared with nil (== nil or != nil)",
                    "compare one of its attributes instead, as in band.name == \"x\"")
            }
            return result
        }
        let lhsType = elementType(lhs)
        let rhsType = elementType(rhs)
        // The type constants on the other side are bound to: the key path's type.
        let keyType = lhsType ?? rhsType

        switch op {
        case .in, .between:
            guard case .array(let elements) = comparison.rhs else {
                throw mismatch(
                    "\(op.rawValue) needs an array on the right, as in \(op == .in ? "{1, 2, 3}" : "{1990, 1999}")")
            }
            if op == .between && elements.count != 2 {
                throw mismatch("BETWEEN needs exactly two values {low, high}, found \(elements.count)")
            }
            guard let keyType = lhsType else { return result }
            if op == .between && !keyType.isOrdered {
                throw mismatch("values of type \(keyType.rawValue) have no order, so BETWEEN cannot apply")
            }
            var bound: [Operand] = []
            for element in elements {
                bound.append(try bindConstant(element, to: keyType, describing: comparison.lhs))
            }
            result.rhs = .array(bound)
        default:
            if case .array = rhs { throw mismatch("an array can only be used with IN or BETWEEN") }
            if case .array = lhs { throw mismatch("an array can only be on the right of IN or BETWEEN") }
            if op.isStringOperator {
                for (expression, type) in [(comparison.lhs, lhsType), (comparison.rhs, rhsType)]
                where type != nil && type != .string {
                    throw mismatch("\(op.rawValue) applies to strings, but \(describe(expression, type)) is not one")
                }
            }
            if let keyType {
                result.lhs = try bindConstant(comparison.lhs, to: keyType, describing: comparison.rhs)
                result.rhs = try bindConstant(comparison.rhs, to: keyType, describing: comparison.lhs)
            }
            let boundLeft = try constantType(result.lhs) ?? lhsType
            let boundRight = try constantType(result.rhs) ?? rhsType
            if let left = boundLeft, let right = boundRight, !compatible(left, right) {
                throw mismatch(
                    "\(describe(comparison.lhs, left)) is compared with \(describe(comparison.rhs, right))",
                    "compare values of the same type")
            }
            if op == .like || op == .matches {
                guard case .constant(.string(let pattern)) = result.rhs else {
                    throw mismatch("\(op.rawValue) needs a string pattern on the right")
                }
                if op == .matches { try StringMatcher.checkRegex(pattern) }
            }
            if op.isOrdering, let type = keyType, !type.isOrdered {
                throw mismatch("values of type \(type.rawValue) have no order, so \(op.rawValue) cannot apply")
            }
        }
        if !comparison.options.isEmpty, let type = keyType, type != .string {
            throw mismatch("options [c] and [d] apply to strings, but \(describe(comparison.lhs, type)) is not one")
        }
        return result
    }

    private static func checkModifier(_ comparison: Comparison, lhs: Shape, rhs: Shape) throws(StoreChainError) {
        if case .collection = rhs {
            throw mismatch(
                "the right side '\(comparison.rhs)' goes through a to-many relationship",
                "put the to-many key path on the left with ANY, ALL or NONE")
        }
        if lhs == .toManyRelationship || rhs == .toManyRelationship {
            throw mismatch(
                "a to-many relationship cannot be compared directly",
                "use an aggregate such as albums.@count, or ANY with one of its attributes")
        }
        switch (comparison.modifier, lhs) {
        case (.direct, .collection):
            throw mismatch(
                "'\(comparison.lhs)' goes through a to-many relationship and leads to many values",
                "say ANY, ALL or NONE before it, or use an aggregate such as @count")
        case (.direct, _), (_, .collection): return
        default:
            throw mismatch(
                "\(comparison.modifier.rawValue) needs a key path through a to-many relationship on the left",
                "remove \(comparison.modifier.rawValue), or use a key path such as albums.year")
        }
    }

    static func shape(of expression: Operand, entity: EntityDescription, model: ObjectModel) throws(StoreChainError)
        -> Shape
    {
        switch expression {
        case .constant(let value): return .single(value.type)
        case .array(let elements):
            var types: [AttributeType?] = []
            for element in elements {
                switch element {
                case .constant(let value): types.append(value.type)
                case .variable(let name): throw unboundVariable(name)
                default: throw mismatch("arrays may hold only values, found '\(element)'")
                }
            }
            return .array(types)
        case .variable(let name): throw unboundVariable(name)
        case .keyPath(let components):
            let resolved = try ResolvedKeyPath(components, from: entity, in: model)
            switch resolved.terminal {
            case .attribute(let attribute):
                return resolved.isCollection ? .collection(attribute.type) : .single(attribute.type)
            case .relationship(let relationship):
                if resolved.isCollection || relationship.isToMany { return .toManyRelationship }
                return .toOneRelationship
            }
        case .aggregate(let function, let collection, let property):
            return .single(try aggregateType(function, collection, property, entity: entity, model: model))
        }
    }

    private static func aggregateType(
        _ function: Operand.Aggregate, _ collection: [String], _ property: [String], entity: EntityDescription,
        model: ObjectModel
    ) throws(StoreChainError) -> AttributeType {
        let resolved = try ResolvedKeyPath(collection, from: entity, in: model)
        let text = collection.joined(separator: ".")
        guard case .relationship(let relationship) = resolved.terminal, relationship.isToMany || resolved.isCollection
        else {
            throw mismatch("@\(function.rawValue) needs a to-many relationship, but '\(text)' is not one")
        }
        if function == .count { return .integer }
        guard let destination = model.entity(named: relationship.destination) else {
            throw StoreChainError(.invalidModel, "unknown entity '\(relationship.destination)'")
        }
        let propertyPath = try ResolvedKeyPath(property, from: destination, in: model)
        guard let attribute = propertyPath.attribute, !propertyPath.isCollection else {
            throw mismatch(
                "@\(function.rawValue) needs an attribute after it, but '\(property.joined(separator: "."))' is not one"
            )
        }
        switch function {
        case .count: return .integer
        case .sum, .avg:
            guard attribute.type.isNumeric else {
                throw mismatch(
                    "@\(function.rawValue) needs a numeric attribute, but '\(attribute.name)' is \(attribute.type.rawValue)"
                )
            }
            return function == .sum && attribute.type == .integer ? .integer : .double
        case .min, .max:
            guard attribute.type.isOrdered else {
                throw mismatch(
                    "@\(function.rawValue) needs an ordered attribute, but '\(attribute.name)' is \(attribute.type.rawValue)"
                )
            }
            return attribute.type
        }
    }

    private static func elementType(_ shape: Shape) -> AttributeType? {
        switch shape {
        case .single(let type): type
        case .collection(let type): type
        default: nil
        }
    }

    private static func constantType(_ expression: Operand) throws(StoreChainError) -> AttributeType? {
        if case .constant(let value) = expression { return value.type }
        return nil
    }

    /// Converts a constant to `type` where a string literal is the only way to write it
    /// (dates, UUIDs, URLs); other types must already match.
    private static func bindConstant(_ expression: Operand, to type: AttributeType, describing other: Operand)
        throws(StoreChainError) -> Operand
    {
        guard case .constant(let value) = expression, let valueType = value.type, valueType != type else {
            return expression
        }
        if compatible(valueType, type) { return expression }
        if case .string(let text) = value, [.date, .uuid, .url].contains(type) {
            do {
                return .constant(try Value.coerce(.string(text), to: type))
            } catch {
                throw mismatch(
                    "\"\(text)\" cannot be read as \(type.rawValue) to compare with '\(other)'",
                    error.suggestion)
            }
        }
        throw mismatch(
            "\(describe(other, type)) is compared with \(describe(expression, valueType))",
            "compare with a value of type \(type.rawValue)")
    }

    static func compatible(_ a: AttributeType, _ b: AttributeType) -> Bool {
        a == b || (a.isNumeric && b.isNumeric)
    }

    private static func describe(_ expression: Operand, _ type: AttributeType?) -> String {
        switch expression {
        case .constant(.null): "nil"
        case .constant: "\(type?.rawValue ?? "nil") \(expression)"
        case .keyPath, .aggregate: "\(type?.rawValue ?? "untyped") '\(expression)'"
        default: "'\(expression)'"
        }
    }

    private static func unboundVariable(_ name: String) -> StoreChainError {
        StoreChainError(
            .invalidRequest, "variable $\(name) has no value", suggestion: "call substituting([\"\(name)\": …]) first")
    }

    private static func mismatch(_ message: String, _ suggestion: String? = nil) -> StoreChainError {
        StoreChainError(.typeMismatch, message, suggestion: suggestion)
    }
}
