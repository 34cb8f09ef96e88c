/// Splits predicate text into tokens, each with its character offset for error messages.
struct PredicateLexer {
    enum Keyword: String, CaseIterable {
        case and = "AND"
        case or = "OR"
        case not = "NOT"
        case any = "ANY"
        case all = "ALL"
        case none = "NONE"
        case some = "SOME"
        case `in` = "IN"
        case between = "BETWEEN"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"
        case truePredicate = "TRUEPREDICATE"
        case falsePredicate = "FALSEPREDICATE"
        case `true` = "TRUE"
        case `false` = "FALSE"
        case yes = "YES"
        case no = "NO"
        case `nil` = "NIL"
        case null = "NULL"
        case cast = "CAST"
        case `self` = "SELF"
    }

    /// `&&`, `||` and `!`.
    enum Logical: String {
        case and = "&&"
        case or = "||"
        case not = "!"
    }

    enum Kind: Equatable {
        case identifier(String)
        case keyword(Keyword)
        case integer(Int)
        case double(Double)
        case string(String)
        /// `== != < <= > >=`, normalized (`=` → `==`, `<>` → `!=`, `=<` → `<=`, `=>` → `>=`).
        case comparison(Comparison.Operator)
        case logical(Logical)
        /// `( ) { } [ ] , .`
        case punctuation(Unicode.Scalar)
        /// `@count`, `@sum`, …
        case aggregate(String)
        /// `%@`, `%K`, `%d`, `%i`, `%f`: the letter after `%`.
        case argument(Unicode.Scalar)
        case variable(String)
        case end
    }

    struct Token: Equatable {
        let kind: Kind
        let offset: Int
    }

    private static let keywords = Dictionary(uniqueKeysWithValues: Keyword.allCases.map { ($0.rawValue, $0) })
    /// The keywords' spellings by length, for matching an ASCII word without building a string.
    private static let keywordsByLength: [[(Keyword, [UInt8])]] = {
        var table = [[(Keyword, [UInt8])]](repeating: [], count: 16)
        for keyword in Keyword.allCases {
            table[keyword.rawValue.utf8.count].append((keyword, Array(keyword.rawValue.utf8)))
        }
        return table
    }()

    /// Whether `word` must be escaped with `#` to be used as a key path component.
    static func isReserved(_ word: String) -> Bool {
        keywords[word.uppercased()] != nil || !ModelValidator.isIdentifier(word)
    }

    /// The keyword `word` spells in any letter case. ASCII words (nearly all) are matched in
    /// place; others are upper-cased as Unicode does (`ſome` is `SOME`), as `isReserved` does.
    private static func keyword(_ word: ArraySlice<Unicode.Scalar>) -> Keyword? {
        for index in word.indices where !word[index].isASCII { return keywords[string(word).uppercased()] }
        guard word.count < keywordsByLength.count else { return nil }
        candidates: for (keyword, spelling) in keywordsByLength[word.count] {
            for offset in 0..<spelling.count {
                let value = word[word.startIndex + offset].value
                let upper = (0x61...0x7A).contains(value) ? value - 0x20 : value
                guard upper == UInt32(spelling[offset]) else { continue candidates }
            }
            return keyword
        }
        return nil
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? scalar == " " || (0x09...0x0D).contains(scalar.value) : scalar.properties.isWhitespace
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value | 0x20
            return (0x61...0x7A).contains(value)
        }
        return scalar.properties.isAlphabetic
    }

    private let characters: [Unicode.Scalar]
    private var position = 0

    init(_ text: String) {
        characters = Array(text.unicodeScalars)
    }

    static func tokenize(_ text: String) throws(StoreChainError) -> [Token] {
        var lexer = PredicateLexer(text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func error(_ message: String, at offset: Int) -> StoreChainError {
        StoreChainError(.predicateSyntax, message, at: .init(offset: offset))
    }

    private var current: Unicode.Scalar? { position < characters.count ? characters[position] : nil }

    private func peek(_ distance: Int = 1) -> Unicode.Scalar? {
        position + distance < characters.count ? characters[position + distance] : nil
    }

    private mutating func next() throws(StoreChainError) -> Token {
        while let character = current, Self.isWhitespace(character) { position += 1 }
        let start = position
        guard let character = current else { return Token(kind: .end, offset: start) }
        func token(_ kind: Kind, length: Int) -> Token {
            position += length
            return Token(kind: kind, offset: start)
        }
        switch character {
        case "(", ")", "{", "}", "[", "]", ",", ".": return token(.punctuation(character), length: 1)
        case "=":
            if peek() == "=" { return token(.comparison(.equal), length: 2) }
            if peek() == "<" { return token(.comparison(.lessOrEqual), length: 2) }
            if peek() == ">" { return token(.comparison(.greaterOrEqual), length: 2) }
            return token(.comparison(.equal), length: 1)
        case "!":
            if peek() == "=" { return token(.comparison(.notEqual), length: 2) }
            return token(.logical(.not), length: 1)
        case "<":
            if peek() == "=" { return token(.comparison(.lessOrEqual), length: 2) }
            if peek() == ">" { return token(.comparison(.notEqual), length: 2) }
            return token(.comparison(.less), length: 1)
        case ">":
            if peek() == "=" { return token(.comparison(.greaterOrEqual), length: 2) }
            return token(.comparison(.greater), length: 1)
        case "&":
            guard peek() == "&" else { throw error("expected '&&', found a single '&'", at: start) }
            return token(.logical(.and), length: 2)
        case "|":
            guard peek() == "|" else { throw error("expected '||', found a single '|'", at: start) }
            return token(.logical(.or), length: 2)
        case "\"", "'": return Token(kind: .string(try readString(quote: character)), offset: start)
        case "%":
            guard let letter = peek(), "@KdifD".unicodeScalars.contains(letter) else {
                throw error("expected %@, %K, %d, %i or %f after '%'", at: start)
            }
            return token(.argument(letter == "D" ? "d" : letter), length: 2)
        case "$":
            position += 1
            let name = readWord()
            guard !name.isEmpty else { throw error("expected a variable name after '$'", at: start) }
            return Token(kind: .variable(name), offset: start)
        case "@":
            position += 1
            let name = readWord()
            guard !name.isEmpty else { throw error("expected an aggregate such as @count after '@'", at: start) }
            return Token(kind: .aggregate(name), offset: start)
        case "#":
            position += 1
            let name = readWord()
            guard !name.isEmpty else { throw error("expected a key name after '#'", at: start) }
            return Token(kind: .identifier(name), offset: start)
        case "-", "+":
            guard let next = peek(), Self.isDigit(next) else {
                throw error("unexpected '\(character)'", at: start)
            }
            return Token(kind: try readNumber(), offset: start)
        case _ where Self.isDigit(character):
            return Token(kind: try readNumber(), offset: start)
        case _ where Self.isLetter(character) || character == "_":
            let word = readWordScalars()
            if let keyword = Self.keyword(word) { return Token(kind: .keyword(keyword), offset: start) }
            return Token(kind: .identifier(Self.string(word)), offset: start)
        default:
            throw error("unexpected character '\(character)'", at: start)
        }
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }

    /// The scalars as a string, encoded straight into its storage (appending them to a
    /// `unicodeScalars` view went through a generic, unspecialized path: half a parse).
    private static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var length = 0
        for index in scalars.indices { length += UTF8.width(scalars[index]) }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var written = 0
            for index in scalars.indices {
                UTF8.encode(scalars[index]) { byte in
                    buffer[written] = byte
                    written += 1
                }
            }
            return written
        }
    }

    private mutating func readWord() -> String {
        Self.string(readWordScalars())
    }

    private mutating func readWordScalars() -> ArraySlice<Unicode.Scalar> {
        let start = position
        while let character = current, Self.isLetter(character) || Self.isDigit(character) || character == "_" {
            position += 1
        }
        return characters[start..<position]
    }

    private mutating func readNumber() throws(StoreChainError) -> Kind {
        let start = position
        if current == "-" || current == "+" { position += 1 }
        func skipDigits() -> Int {
            let digitsStart = position
            while let character = current, Self.isDigit(character) { position += 1 }
            return position - digitsStart
        }
        _ = skipDigits()
        var isInteger = true
        if current == ".", let next = peek(), Self.isDigit(next) {
            isInteger = false
            position += 1
            _ = skipDigits()
        }
        if current == "e" || current == "E" {
            let exponentStart = position
            position += 1
            if current == "-" || current == "+" { position += 1 }
            if skipDigits() == 0 {
                position = exponentStart
            } else {
                isInteger = false
            }
        }
        let text = Self.string(characters[start..<position])
        if isInteger, let integer = Int(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else {
            throw error("number \(text) is out of range", at: start)
        }
        return .double(double)
    }

    private mutating func readString(quote: Unicode.Scalar) throws(StoreChainError) -> String {
        let start = position
        position += 1
        // Most strings have no escapes: built once from their scalars.
        if let end = characters[position...].firstIndex(where: { $0 == quote || $0 == "\\" }), characters[end] == quote
        {
            defer { position = end + 1 }
            return Self.string(characters[position..<end])
        }
        var result = ""
        while true {
            guard let character = current else {
                throw error("unterminated string: expected a closing \(quote)", at: start)
            }
            position += 1
            if character == quote { return result }
            guard character == "\\" else {
                result.unicodeScalars.append(character)
                continue
            }
            guard let escaped = current else { throw error("unterminated escape sequence", at: position - 1) }
            position += 1
            switch escaped {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "0": result.append("\0")
            case "u": result.unicodeScalars.append(try readUnicodeEscape())
            default: result.unicodeScalars.append(escaped)
            }
        }
    }

    private mutating func readUnicodeEscape() throws(StoreChainError) -> Unicode.Scalar {
        let start = position - 2
        func hex4() throws(StoreChainError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let character = current, let digit = Character(character).hexDigitValue else {
                    throw error("expected four hex digits after \\u", at: start)
                }
                value = value << 4 | UInt32(digit)
                position += 1
            }
            return value
        }
        var code = try hex4()
        if (0xD800..<0xDC00).contains(code), current == "\\", peek() == "u" {
            position += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error("invalid UTF-16 surrogate pair", at: start) }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(code) else { throw error("\\u escape is not a Unicode scalar", at: start) }
        return scalar
    }
}
