// Over 400 lines: one parser over one byte cursor (values, strings with their escapes and UTF-8
// checks, numbers); its steps share the cursor and stay private to it.

/// A strict RFC 8259 JSON parser that says where malformed input goes wrong.
///
/// Errors carry the byte offset, line and column. Nesting deeper than `maxDepth` is rejected
/// instead of exhausting the stack, and duplicate object keys are rejected instead of silently
/// dropping one of the values.
@_spi(Internals) public struct JSONParser {
    public var maxDepth: Int

    public init(maxDepth: Int = 512) {
        self.maxDepth = maxDepth
    }

    /// Parses one JSON document. `source` names the input (a file path or URL) in errors.
    public func parse(_ bytes: some Collection<UInt8>, source: String? = nil) throws(StoreChainError)
        -> JSONValue
    {
        try scanning(bytes, source: source) { scanner throws(StoreChainError) in
            scanner.skipWhitespace()
            let value = try scanner.parseValue(depth: 0)
            try scanner.expectEndOfDocument()
            return value
        }
    }

    /// Parses JSON text.
    public func parse(_ text: String, source: String? = nil) throws(StoreChainError) -> JSONValue {
        try parse(Array(text.utf8), source: source)
    }

    /// What ``parseCollections(_:source:_:)`` reads, in document order.
    public enum CollectionsEvent {
        /// The document is not an object: here it is, whole.
        case document(JSONValue)
        /// A top-level member whose value is not an array.
        case member(String, JSONValue)
        /// A top-level member whose value is an array: its elements follow.
        case collection(String)
        /// One element of the array named by the last `collection` event.
        case element(JSONValue, index: Int)
    }

    /// Parses a document of named arrays (`{"Band": [{…}, …], "Album": […]}`) handing each array
    /// element to `visit` as soon as it is read, so that the document as a whole is never held:
    /// a large data file needs memory for one record at a time, not for its whole tree.
    ///
    /// The rules and errors are those of `parse(_:source:)`; an error `visit` throws stops the
    /// parse and is rethrown.
    public func parseCollections(
        _ bytes: some Collection<UInt8>, source: String? = nil,
        _ visit: (CollectionsEvent) throws(StoreChainError) -> Void
    ) throws(StoreChainError) {
        try scanning(bytes, source: source) { scanner throws(StoreChainError) in
            try scanner.parseCollections(visit)
        }
    }

    /// Runs `body` over the bytes in place when they are contiguous (a `Data`, an array), or over
    /// a copy otherwise.
    private func scanning<Result>(
        _ bytes: some Collection<UInt8>, source: String?, _ body: (inout Scanner) throws(StoreChainError) -> Result
    ) throws(StoreChainError) -> Result {
        func run(_ buffer: UnsafeBufferPointer<UInt8>) -> Swift.Result<Result, StoreChainError> {
            var scanner = Scanner(bytes: buffer, source: source, maxDepth: maxDepth)
            do throws(StoreChainError) {
                return .success(try body(&scanner))
            } catch {
                return .failure(error)
            }
        }
        let outcome = bytes.withContiguousStorageIfAvailable(run) ?? Array(bytes).withUnsafeBufferPointer(run)
        return try outcome.get()
    }
}

@_spi(Internals) extension JSONParser {
    fileprivate struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let source: String?
        let maxDepth: Int
        var position = 0

        init(bytes: UnsafeBufferPointer<UInt8>, source: String?, maxDepth: Int) {
            self.bytes = bytes
            self.source = source
            self.maxDepth = maxDepth
        }

        func error(_ message: String, at offset: Int? = nil) -> StoreChainError {
            let offset = min(offset ?? position, bytes.count)
            var line = 1
            var lineStart = 0
            for index in 0..<offset where bytes[index] == UInt8(ascii: "\n") {
                line += 1
                lineStart = index + 1
            }
            let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
            return StoreChainError(
                .malformedJSON, "malformed JSON: \(message)",
                at: .init(file: source, line: line, column: column, offset: offset),
                suggestion: "fix the JSON text at that place (byte offset \(offset))")
        }

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while let byte = current,
                byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
            {
                position += 1
            }
        }

        func describeCurrent() -> String {
            guard let byte = current else { return "end of input" }
            if byte >= 0x20 && byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
            return "byte 0x" + String(byte, radix: 16)
        }

        mutating func parseValue(depth: Int) throws(StoreChainError) -> JSONValue {
            guard let byte = current else { throw error("expected a value, found end of input") }
            switch byte {
            case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"):
                try expectWord("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expectWord("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expectWord("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw error("expected a value, found \(describeCurrent())")
            }
        }

        mutating func expectEndOfDocument() throws(StoreChainError) {
            skipWhitespace()
            if position < bytes.count {
                throw error("unexpected text after the end of the JSON document")
            }
        }

        /// Reads the `,` between two members or elements (true) or the closing bracket (false).
        mutating func readSeparator(closing: UInt8, in container: String) throws(StoreChainError) -> Bool {
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                return true
            case closing:
                position += 1
                return false
            default:
                let bracket = Character(UnicodeScalar(closing))
                throw error("expected ',' or '\(bracket)' in \(container), found \(describeCurrent())")
            }
        }

        /// Reads `"key":` and leaves the scanner at the value.
        mutating func readKey() throws(StoreChainError) -> (key: String, start: Int) {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                throw error("expected a string key in object, found \(describeCurrent())")
            }
            let start = position
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                throw error("expected ':' after object key \"\(key)\", found \(describeCurrent())")
            }
            position += 1
            skipWhitespace()
            return (key, start)
        }

        /// Reads `[` and whether the array is empty (then its `]` is read too).
        mutating func openArray(depth: Int) throws(StoreChainError) -> Bool {
            try checkDepth(depth)
            position += 1
            skipWhitespace()
            guard current == UInt8(ascii: "]") else { return false }
            position += 1
            return true
        }

        mutating func parseCollections(_ visit: (CollectionsEvent) throws(StoreChainError) -> Void)
            throws(StoreChainError)
        {
            skipWhitespace()
            guard current == UInt8(ascii: "{") else {
                let document = try parseValue(depth: 0)
                try expectEndOfDocument()
                return try visit(.document(document))
            }
            try checkDepth(1)
            position += 1
            skipWhitespace()
            var names: Set<String> = []
            var more = current != UInt8(ascii: "}")
            if !more { position += 1 }
            while more {
                let (name, start) = try readKey()
                guard names.insert(name).inserted else {
                    throw error("duplicate key \"\(name)\" in object", at: start)
                }
                if current == UInt8(ascii: "[") {
                    try visit(.collection(name))
                    var index = 0
                    var elements = !(try openArray(depth: 2))
                    while elements {
                        skipWhitespace()
                        try visit(.element(try parseValue(depth: 2), index: index))
                        index += 1
                        elements = try readSeparator(closing: UInt8(ascii: "]"), in: "array")
                    }
                } else {
                    try visit(.member(name, try parseValue(depth: 1)))
                }
                more = try readSeparator(closing: UInt8(ascii: "}"), in: "object")
            }
            try expectEndOfDocument()
        }

        mutating func expectWord(_ word: String) throws(StoreChainError) {
            let start = position
            for expected in word.utf8 {
                guard current == expected else {
                    throw error("expected '\(word)'", at: start)
                }
                position += 1
            }
        }

        mutating func checkDepth(_ depth: Int) throws(StoreChainError) {
            if depth > maxDepth {
                throw error("nesting is deeper than the limit of \(maxDepth) levels")
            }
        }

        mutating func parseObject(depth: Int) throws(StoreChainError) -> JSONValue {
            try checkDepth(depth)
            position += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            repeat {
                let (key, start) = try readKey()
                let value = try parseValue(depth: depth)
                if members.updateValue(value, forKey: key) != nil {
                    throw error("duplicate key \"\(key)\" in object", at: start)
                }
            } while try readSeparator(closing: UInt8(ascii: "}"), in: "object")
            return .object(members)
        }

        mutating func parseArray(depth: Int) throws(StoreChainError) -> JSONValue {
            var elements: [JSONValue] = []
            if try openArray(depth: depth) { return .array(elements) }
            repeat {
                skipWhitespace()
                elements.append(try parseValue(depth: depth))
            } while try readSeparator(closing: UInt8(ascii: "]"), in: "array")
            return .array(elements)
        }

        mutating func parseNumber() throws(StoreChainError) -> JSONValue {
            let start = position
            var isInteger = true
            if current == UInt8(ascii: "-") { position += 1 }
            guard let first = current, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
                throw error("expected a digit in number, found \(describeCurrent())")
            }
            if first == UInt8(ascii: "0") {
                position += 1
            } else {
                skipDigits()
            }
            if current == UInt8(ascii: ".") {
                isInteger = false
                position += 1
                guard skipDigits() > 0 else {
                    throw error("expected a digit after '.', found \(describeCurrent())")
                }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                isInteger = false
                position += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
                guard skipDigits() > 0 else {
                    throw error("expected a digit in exponent, found \(describeCurrent())")
                }
            }
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            if isInteger, let integer = Int(text) { return .integer(integer) }
            guard let double = Double(text), double.isFinite else {
                throw error("number \(text) is out of range", at: start)
            }
            return .double(double)
        }

        @discardableResult
        mutating func skipDigits() -> Int {
            let start = position
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                position += 1
            }
            return position - start
        }

        mutating func parseString() throws(StoreChainError) -> String {
            let start = position
            position += 1
            // Most strings have no escapes: build them from the bytes in place.
            while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 {
                position += 1
            }
            if current == UInt8(ascii: "\"") {
                position += 1
                guard let string = String(validating: bytes[start + 1..<position - 1], as: UTF8.self) else {
                    throw error("string is not valid UTF-8", at: start)
                }
                return string
            }
            var utf8 = Array(bytes[start + 1..<position])
            while true {
                guard let byte = current else {
                    throw error("unterminated string starting here", at: start)
                }
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    guard let string = String(validating: utf8, as: UTF8.self) else {
                        throw error("string is not valid UTF-8", at: start)
                    }
                    return string
                case UInt8(ascii: "\\"):
                    position += 1
                    try parseEscape(into: &utf8)
                case 0..<0x20:
                    throw error("control character in string must be escaped")
                default:
                    utf8.append(byte)
                    position += 1
                }
            }
        }

        mutating func parseEscape(into utf8: inout [UInt8]) throws(StoreChainError) {
            guard let byte = current else { throw error("unterminated escape sequence") }
            position += 1
            let simple: UInt8? =
                switch byte {
                case UInt8(ascii: "\""): 0x22
                case UInt8(ascii: "\\"): 0x5C
                case UInt8(ascii: "/"): 0x2F
                case UInt8(ascii: "b"): 0x08
                case UInt8(ascii: "f"): 0x0C
                case UInt8(ascii: "n"): 0x0A
                case UInt8(ascii: "r"): 0x0D
                case UInt8(ascii: "t"): 0x09
                default: nil
                }
            if let simple {
                utf8.append(simple)
                return
            }
            guard byte == UInt8(ascii: "u") else {
                throw error("invalid escape '\\\(Character(UnicodeScalar(byte)))'", at: position - 2)
            }
            var code = try parseHex4()
            if (0xD800..<0xDC00).contains(code) {
                guard current == UInt8(ascii: "\\"), position + 1 < bytes.count,
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("unpaired UTF-16 surrogate in \\u escape") }
                position += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw error("invalid low surrogate in \\u escape")
                }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = UnicodeScalar(code) else {
                throw error("\\u escape is not a Unicode scalar")
            }
            utf8.append(contentsOf: String(scalar).utf8)
        }

        mutating func parseHex4() throws(StoreChainError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = current, let digit = hexDigit(byte) else {
                    throw error("expected four hex digits in \\u escape")
                }
                value = value << 4 | digit
                position += 1
            }
            return value
        }

        func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }
    }
}
