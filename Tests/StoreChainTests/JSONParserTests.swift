@_spi(Internals) import StoreChain
import Testing

@Suite struct JSONParserTests {
    let parser = JSONParser()

    @Test func parsesEveryKindOfValue() throws {
        let value = try parser.parse(
            #" {"a": [1, -2, 3.5, 1e3, -0.25E-2, true, false, null], "b": {"c": "x\"y\\z\/\n\u00e9\ud83c\udfb8"}} "#)
        #expect(
            value
                == .object([
                    "a": .array([
                        .integer(1), .integer(-2), .double(3.5), .double(1000), .double(-0.0025), .bool(true),
                        .bool(false), .null,
                    ]),
                    "b": .object(["c": .string("x\"y\\z/\né🎸")]),
                ]))
    }

    @Test func integersTooBigForIntBecomeDoubles() throws {
        #expect(try parser.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
    }

    @Test func writerOutputParsesBack() throws {
        let value = JSONValue.object([
            "k\u{1}": .array([.string("\"\\\t"), .double(0.1), .integer(-7), .null]), "e": .object([:]),
        ])
        #expect(try parser.parse(value.description) == value)
    }

    @Test(arguments: [
        ("", 0, 1, 1, "expected a value, found end of input"),
        ("{\"a\": 1,}", 8, 1, 9, "expected a string key in object, found '}'"),
        ("{\"a\" 1}", 5, 1, 6, "expected ':' after object key \"a\""),
        ("[1 2]", 3, 1, 4, "expected ',' or ']' in array"),
        ("{\n  \"a\": tru\n}", 9, 2, 8, "expected 'true'"),
        ("\"abc", 0, 1, 1, "unterminated string"),
        ("\"a\u{1}\"", 2, 1, 3, "control character in string"),
        ("\"\\x\"", 1, 1, 2, "invalid escape '\\x'"),
        ("\"\\ud800\"", 7, 1, 8, "unpaired UTF-16 surrogate"),
        ("01", 1, 1, 2, "unexpected text after the end"),
        ("-", 1, 1, 2, "expected a digit in number"),
        ("1.", 2, 1, 3, "expected a digit after '.'"),
        ("1e", 2, 1, 3, "expected a digit in exponent"),
        ("1e999", 0, 1, 1, "out of range"),
        ("{\"a\": 1, \"a\": 2}", 9, 1, 10, "duplicate key \"a\""),
        ("[1] x", 4, 1, 5, "unexpected text after the end"),
        ("[\"é\", x]", 7, 1, 7, "expected a value, found 'x'"),
    ])
    func malformedInputSaysWhere(_ text: String, _ offset: Int, _ line: Int, _ column: Int, _ message: String) {
        let error = #expect(throws: StoreChainError.self) { try parser.parse(text, source: "data.json") }
        #expect(error?.code == .malformedJSON)
        #expect(error?.location?.offset == offset, "\(error?.description ?? "")")
        #expect(error?.location?.line == line)
        #expect(error?.location?.column == column, "\(error?.description ?? "")")
        #expect(error?.location?.file == "data.json")
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        let streamed = #expect(throws: StoreChainError.self) {
            try parser.parseCollections(Array(text.utf8), source: "data.json") { _ in }
        }
        #expect(streamed == error, "reading element by element reports what a whole parse does")
    }

    @Test func collectionsAreHandedOverElementByElement() throws {
        var events: [String] = []
        try parser.parseCollections(Array(#" {"A": [1, {"x": [2]}], "B": 3, "C": [] } "#.utf8)) { event in
            switch event {
            case .document(let value): events.append("document \(value)")
            case .member(let name, let value): events.append("member \(name) \(value)")
            case .collection(let name): events.append("collection \(name)")
            case .element(let value, let index): events.append("element \(index) \(value)")
            }
        }
        #expect(events == ["collection A", "element 0 1", #"element 1 {"x":[2]}"#, "member B 3", "collection C"])
        var document: [String] = []
        try parser.parseCollections(Array("[1]".utf8)) { event in
            if case .document(let value) = event { document.append(value.description) }
        }
        #expect(document == ["[1]"])
    }

    @Test func rejectsInvalidUTF8() {
        let error = #expect(throws: StoreChainError.self) { try parser.parse([0x22, 0xFF, 0x22]) }
        #expect(error?.message.contains("not valid UTF-8") == true)
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = #expect(throws: StoreChainError.self) { try parser.parse(deep) }
        #expect(error?.message.contains("deeper than the limit of 512") == true)
        #expect(throws: Never.self) {
            try JSONParser(maxDepth: 600).parse(String(repeating: "[", count: 600) + String(repeating: "]", count: 600))
        }
    }
}
