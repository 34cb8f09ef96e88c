import Foundation

// Over 400 lines: one recursive-descent grammar (precedence levels, operators with their
// modifiers, aggregates, arguments), read top to bottom; split, a rule's callers and callees would
// sit in different files.

extension FetchPredicate {
    /// Parses NSPredicate format syntax, substituting `%@`, `%K`, `%d`, `%f` from `arguments`.
    ///
    /// ```swift
    /// let predicate = try FetchPredicate("%K BEGINSWITH[c] %@ AND ANY albums.year > %d", "name", "rue", 1990)
    /// ```
    /// - Throws: `StoreChainError` with code `.predicateSyntax` and the character offset.
    public init(_ format: String, _ arguments: any PredicateArgumentConvertible...) throws(StoreChainError) {
        try self.init(format: format, arguments: arguments.map(\.predicateArgument))
    }

    /// Parses NSPredicate format syntax with an array of arguments.
    public init(format: String, arguments: [PredicateArgument] = []) throws(StoreChainError) {
        var parser = try PredicateParser(format, arguments: arguments)
        self = try parser.parseAll()
    }
}

struct PredicateParser {
    typealias Token = PredicateLexer.Token
    typealias Keyword = PredicateLexer.Keyword

    private let tokens: [Token]
    private var index = 0
    private let arguments: [PredicateArgument]
    private var argumentIndex = 0
    /// How deeply a predicate may nest: NOT, AND and OR each count one level of the parsed
    /// predicate, whatever parentheses wrote it, so a predicate and its canonical form pass or
    /// fail alike. The same bound on parentheses and NOTs while parsing protects the stack from
    /// hostile input like ten thousand `(`; a canonical form never nests its text deeper than
    /// its predicate (`NOT (…)` counts once), so that bound never rejects one.
    static let maxDepth = 256

    init(_ text: String, arguments: [PredicateArgument]) throws(StoreChainError) {
        tokens = try PredicateLexer.tokenize(text)
        self.arguments = arguments
    }

    private var current: Token { tokens[index] }

    private func error(_ message: String, at token: Token? = nil) -> StoreChainError {
        StoreChainError(.predicateSyntax, message, at: .init(offset: (token ?? current).offset))
    }

    private func describe(_ token: Token) -> String {
        switch token.kind {
        case .identifier(let name): "'\(name)'"
        case .keyword(let keyword): keyword.rawValue
        case .integer(let number): String(number)
        case .double(let number): number.description
        case .string(let string): "string \"\(string)\""
        case .comparison(let op): "'\(op.rawValue)'"
        case .logical(let op): "'\(op.rawValue)'"
        case .punctuation(let character): "'\(character)'"
        case .aggregate(let name): "'@\(name)'"
        case .argument(let letter): "'%\(letter)'"
        case .variable(let name): "'$\(name)'"
        case .end: "end of input"
        }
    }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private mutating func accept(_ kind: PredicateLexer.Kind) -> Bool {
        guard current.kind == kind else { return false }
        advance()
        return true
    }

    private mutating func expect(_ kind: PredicateLexer.Kind, _ what: String) throws(StoreChainError) {
        guard accept(kind) else { throw error("expected \(what), found \(describe(current))") }
    }

    mutating func parseAll() throws(StoreChainError) -> FetchPredicate {
        let predicate = try parseOr(depth: 0)
        guard current.kind == .end else {
            throw error("expected AND, OR or end of input, found \(describe(current))")
        }
        guard predicate.nestingDepth <= Self.maxDepth else {
            throw StoreChainError(
                .predicateSyntax,
                "predicate is nested deeper than \(Self.maxDepth) levels (NOT, AND and OR each count one)",
                at: .init(offset: 0), suggestion: "flatten it, e.g. with IN or by removing double negations")
        }
        if argumentIndex < arguments.count {
            throw StoreChainError(
                .predicateSyntax,
                "\(arguments.count) arguments were given but the format uses \(argumentIndex)",
                suggestion: "remove the extra arguments or add % placeholders")
        }
        return predicate
    }

    private mutating func parseOr(depth: Int) throws(StoreChainError) -> FetchPredicate {
        var operands = [try parseAnd(depth: depth)]
        while accept(.keyword(.or)) || accept(.logical(.or)) {
            operands.append(try parseAnd(depth: depth))
        }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    private mutating func parseAnd(depth: Int) throws(StoreChainError) -> FetchPredicate {
        var operands = [try parseNot(depth: depth)]
        while accept(.keyword(.and)) || accept(.logical(.and)) {
            operands.append(try parseNot(depth: depth))
        }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    private mutating func parseNot(depth: Int) throws(StoreChainError) -> FetchPredicate {
        guard accept(.keyword(.not)) || accept(.logical(.not)) else { return try parsePrimary(depth: depth) }
        try checkNesting(depth + 1)
        // `NOT (…)` is one level, as the canonical form writes every negation.
        if accept(.punctuation("(")) { return .not(try parseParenthesized(depth: depth + 1)) }
        return .not(try parseNot(depth: depth + 1))
    }

    private func checkNesting(_ depth: Int) throws(StoreChainError) {
        guard depth <= Self.maxDepth else {
            throw error("parentheses and NOTs are nested deeper than \(Self.maxDepth) levels")
        }
    }

    /// The rest of a parenthesized predicate, after its `(`.
    private mutating func parseParenthesized(depth: Int) throws(StoreChainError) -> FetchPredicate {
        let inner = try parseOr(depth: depth)
        try expect(.punctuation(")"), "')' to close the parenthesis")
        return inner
    }

    private mutating func parsePrimary(depth: Int) throws(StoreChainError) -> FetchPredicate {
        switch current.kind {
        case .punctuation("("):
            try checkNesting(depth + 1)
            advance()
            return try parseParenthesized(depth: depth + 1)
        case .keyword(.truePredicate):
            advance()
            return .true
        case .keyword(.falsePredicate):
            advance()
            return .false
        default:
            return .comparison(try parseComparison())
        }
    }

    private mutating func parseComparison() throws(StoreChainError) -> Comparison {
        var modifier = Comparison.Modifier.direct
        switch current.kind {
        case .keyword(.any), .keyword(.some): modifier = .any
        case .keyword(.all): modifier = .all
        case .keyword(.none): modifier = .none
        default: break
        }
        if modifier != .direct { advance() }
        if case .end = current.kind {
            throw error("expected a comparison such as 'name == \"x\"', found end of input")
        }
        let lhs = try parseExpression()
        let operatorToken = current
        guard let op = comparisonOperator(operatorToken.kind) else {
            throw error("expected a comparison operator (==, !=, <, >, BEGINSWITH, IN, …), found \(describe(current))")
        }
        advance()
        let options = try parseOptions()
        let rhs = try parseExpression()
        return Comparison(lhs, op, rhs, options: options, modifier: modifier)
    }

    private func comparisonOperator(_ kind: PredicateLexer.Kind) -> Comparison.Operator? {
        switch kind {
        case .comparison(let op): op
        case .keyword(.beginsWith): .beginsWith
        case .keyword(.endsWith): .endsWith
        case .keyword(.contains): .contains
        case .keyword(.like): .like
        case .keyword(.matches): .matches
        case .keyword(.in): .in
        case .keyword(.between): .between
        default: nil
        }
    }

    private mutating func parseOptions() throws(StoreChainError) -> Comparison.Options {
        guard current.kind == .punctuation("[") else { return [] }
        advance()
        let token = current
        guard case .identifier(let letters) = token.kind, !letters.isEmpty else {
            throw error("expected comparison options such as [c], [d] or [cd], found \(describe(current))")
        }
        var options: Comparison.Options = []
        for letter in letters {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default:
                throw error("unknown comparison option '\(letter)': expected c (case) or d (diacritics)", at: token)
            }
        }
        advance()
        try expect(.punctuation("]"), "']' to close the comparison options")
        return options
    }

    private mutating func parseExpression() throws(StoreChainError) -> Operand {
        let token = current
        switch token.kind {
        case .integer(let number):
            advance()
            return .constant(.integer(number))
        case .double(let number):
            advance()
            return .constant(.double(number))
        case .string(let string):
            advance()
            return .constant(.string(string))
        case .keyword(.true), .keyword(.yes):
            advance()
            return .constant(.bool(true))
        case .keyword(.false), .keyword(.no):
            advance()
            return .constant(.bool(false))
        case .keyword(.nil), .keyword(.null):
            advance()
            return .constant(.null)
        case .keyword(.cast): return try parseCast()
        case .variable(let name):
            advance()
            return .variable(name)
        case .punctuation("{"): return try parseArray()
        case .argument(let letter):
            advance()
            return try argumentExpression(letter, token)
        case .identifier, .aggregate:
            return try parseKeyPath(startingWith: [])
        default:
            throw error("expected a key path, a value, an argument or '{', found \(describe(token))")
        }
    }

    private mutating func argumentExpression(_ letter: Unicode.Scalar, _ token: Token) throws(StoreChainError)
        -> Operand
    {
        guard argumentIndex < arguments.count else {
            throw error("'%\(letter)' has no argument: only \(arguments.count) were given", at: token)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        switch (letter, argument) {
        case ("@", _): return argument.expression
        case ("K", .value(.string(let keyPath))):
            return try parseKeyPath(startingWith: try keyPathComponents(keyPath, token))
        case ("d", .value(.integer)), ("i", .value(.integer)): return argument.expression
        case ("d", .value(.double(let number))), ("i", .value(.double(let number))):
            guard let integer = Int(exactly: number.rounded(.towardZero)) else {
                throw error("'%\(letter)' argument \(number) is not a whole number", at: token)
            }
            return .constant(.integer(integer))
        case ("f", .value(.double)): return argument.expression
        case ("f", .value(.integer(let number))): return .constant(.double(Double(number)))
        default:
            let expected =
                switch letter {
                case "K": "a key path string"
                case "f": "a number"
                default: "an integer"
                }
            throw error("'%\(letter)' expects \(expected), but argument \(argumentIndex) is \(argument)", at: token)
        }
    }

    /// Reads a `%K` argument inside a key path (`band.%K`).
    private mutating func keyPathArgument(_ token: Token) throws(StoreChainError) -> [String] {
        guard argumentIndex < arguments.count else {
            throw error("'%K' has no argument: only \(arguments.count) were given", at: token)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        guard case .value(.string(let keyPath)) = argument else {
            throw error("'%K' expects a key path string, but argument \(argumentIndex) is \(argument)", at: token)
        }
        return try keyPathComponents(keyPath, token)
    }

    private func keyPathComponents(_ keyPath: String, _ token: Token) throws(StoreChainError) -> [String] {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !keyPath.isEmpty, components.allSatisfy({ !$0.isEmpty }) else {
            throw error("'%K' argument \"\(keyPath)\" is not a key path", at: token)
        }
        return components
    }

    private mutating func parseKeyPath(startingWith prefix: [String]) throws(StoreChainError) -> Operand {
        var components = prefix
        if prefix.isEmpty {
            if case .identifier(let name) = current.kind {
                components.append(name)
                advance()
            }
        }
        while true {
            if case .aggregate(let name) = current.kind {
                return try parseAggregate(name, collection: components)
            }
            guard !components.isEmpty else { break }
            guard current.kind == .punctuation(".") else { break }
            advance()
            switch current.kind {
            case .identifier(let name):
                components.append(name)
                advance()
            case .aggregate: continue
            case .argument("K"):
                let token = current
                advance()
                components += try keyPathArgument(token)
            case .keyword(let keyword):
                throw error("'\(keyword.rawValue)' is a reserved word: write #\(keyword.rawValue) to use it as a key")
            default:
                throw error("expected a key name or @aggregate after '.', found \(describe(current))")
            }
        }
        return .keyPath(components)
    }

    private mutating func parseAggregate(_ name: String, collection: [String]) throws(StoreChainError) -> Operand {
        let token = current
        guard let function = Operand.Aggregate(rawValue: name.lowercased()) else {
            throw error(
                "unknown aggregate '@\(name)': expected @count, @sum, @min, @max or @avg", at: token)
        }
        guard !collection.isEmpty else {
            throw error("'@\(name)' must follow a key path, as in albums.@\(name)", at: token)
        }
        advance()
        var property: [String] = []
        while accept(.punctuation(".")) {
            guard case .identifier(let name) = current.kind else {
                throw error("expected a key name after '.', found \(describe(current))")
            }
            property.append(name)
            advance()
        }
        if function == .count && !property.isEmpty {
            throw error("@count takes no key path after it", at: token)
        }
        if function != .count && property.isEmpty {
            throw error(
                "@\(function.rawValue) needs a key path after it, as in albums.@\(function.rawValue).price", at: token)
        }
        return .aggregate(function, collection: collection, property: property)
    }

    private mutating func parseArray() throws(StoreChainError) -> Operand {
        advance()
        var elements: [Operand] = []
        if accept(.punctuation("}")) { return .array(elements) }
        while true {
            elements.append(try parseExpression())
            if accept(.punctuation("}")) { return .array(elements) }
            try expect(.punctuation(","), "',' or '}' in the array")
        }
    }

    private mutating func parseCast() throws(StoreChainError) -> Operand {
        let castToken = current
        advance()
        try expect(.punctuation("("), "'(' after CAST")
        let valueToken = current
        advance()
        try expect(.punctuation(","), "',' after the value in CAST")
        guard case .string(let typeName) = current.kind else {
            throw error("expected a type name string such as \"NSDate\" in CAST, found \(describe(current))")
        }
        let typeToken = current
        advance()
        try expect(.punctuation(")"), "')' to close CAST")
        guard let value = castValue(valueToken.kind, to: typeName) else {
            let known = "NSDate, NSUUID, NSURL, NSData, NSDecimalNumber, JSON, Double"
            if Self.castTypes.contains(typeName) {
                throw error("cannot CAST \(describe(valueToken)) to \(typeName)", at: castToken)
            }
            throw error("unknown CAST type \"\(typeName)\": expected one of \(known)", at: typeToken)
        }
        return .constant(value)
    }

    private static let castTypes: Set<String> = [
        "NSDate", "Date", "NSUUID", "UUID", "NSURL", "URL", "NSData", "Data", "NSDecimalNumber", "Decimal",
        "JSON", "Double", "NSNumber",
    ]

    private func castValue(_ kind: PredicateLexer.Kind, to typeName: String) -> Value? {
        switch (typeName, kind) {
        case ("NSDate", .integer(let seconds)), ("Date", .integer(let seconds)):
            return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case ("NSDate", .double(let seconds)), ("Date", .double(let seconds)):
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case ("NSDate", .string(let text)), ("Date", .string(let text)):
            return ISO8601.parse(text).map(Value.date)
        case ("NSUUID", .string(let text)), ("UUID", .string(let text)):
            return UUID(uuidString: text).map(Value.uuid)
        case ("NSURL", .string(let text)), ("URL", .string(let text)):
            return URL(string: text).map(Value.url)
        case ("NSData", .string(let text)), ("Data", .string(let text)):
            return Data(base64Encoded: text).map(Value.data)
        case ("NSDecimalNumber", .string(let text)), ("Decimal", .string(let text)):
            return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(Value.decimal)
        case ("JSON", .string(let text)):
            return (try? JSONParser().parse(text)).map(Value.json)
        case ("Double", .string(let text)), ("NSNumber", .string(let text)):
            return Double(text).map(Value.double)
        default:
            return nil
        }
    }
}
