import Foundation
import StoreChain
import Testing

@Suite struct PredicateParserTests {
    typealias Comparison = StoreChain.Comparison

    func comparison(_ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> Comparison {
        let predicate = try FetchPredicate(format: format, arguments: arguments.map(\.predicateArgument))
        guard case .comparison(let comparison) = predicate else {
            Issue.record("\(format) parsed to \(predicate), not a comparison")
            return Comparison(.constant(.null), .equal, .constant(.null))
        }
        return comparison
    }

    @Test(arguments: [
        ("a == 1", Comparison.Operator.equal), ("a = 1", .equal), ("a != 1", .notEqual), ("a <> 1", .notEqual),
        ("a < 1", .less), ("a <= 1", .lessOrEqual), ("a =< 1", .lessOrEqual), ("a > 1", .greater),
        ("a >= 1", .greaterOrEqual), ("a => 1", .greaterOrEqual), ("a BEGINSWITH 'x'", .beginsWith),
        ("a ENDSWITH 'x'", .endsWith), ("a CONTAINS 'x'", .contains), ("a LIKE 'x'", .like),
        ("a MATCHES 'x'", .matches), ("a IN {1}", .in), ("a BETWEEN {1, 2}", .between),
        ("a beginswith 'x'", .beginsWith), ("a in {1}", .in),
    ])
    func operators(_ format: String, _ op: Comparison.Operator) throws {
        #expect(try comparison(format).op == op)
    }

    @Test(arguments: [
        ("a ==[c] 'x'", Comparison.Options.caseInsensitive),
        ("a ==[d] 'x'", .diacriticInsensitive),
        ("a BEGINSWITH[cd] 'x'", Comparison.Options([.caseInsensitive, .diacriticInsensitive])),
        ("a LIKE[dc] 'x'", Comparison.Options([.caseInsensitive, .diacriticInsensitive])),
        ("a CONTAINS 'x'", Comparison.Options()),
    ])
    func options(_ format: String, _ options: Comparison.Options) throws {
        #expect(try comparison(format).options == options)
    }

    @Test(arguments: [
        ("ANY a.b == 1", Comparison.Modifier.any), ("SOME a.b == 1", .any), ("ALL a.b == 1", .all),
        ("NONE a.b == 1", .none), ("a.b == 1", .direct), ("any a.b == 1", .any),
    ])
    func modifiers(_ format: String, _ modifier: Comparison.Modifier) throws {
        #expect(try comparison(format).modifier == modifier)
    }

    @Test func literals() throws {
        #expect(try comparison("a == 'single'").rhs == .constant("single"))
        #expect(try comparison("a == \"double \\\"quoted\\\" \\n\"").rhs == .constant("double \"quoted\" \n"))
        #expect(try comparison("a == \"\\u00e9\\ud83c\\udfb8\"").rhs == .constant("é🎸"))
        #expect(try comparison("a == 42").rhs == .constant(42))
        #expect(try comparison("a == -42").rhs == .constant(-42))
        #expect(try comparison("a == 4.5").rhs == .constant(4.5))
        #expect(try comparison("a == -1.5e3").rhs == .constant(-1500.0))
        #expect(try comparison("a == TRUE").rhs == .constant(true))
        #expect(try comparison("a == yes").rhs == .constant(true))
        #expect(try comparison("a == FALSE").rhs == .constant(false))
        #expect(try comparison("a == NO").rhs == .constant(false))
        #expect(try comparison("a == nil").rhs == .constant(.null))
        #expect(try comparison("a == NULL").rhs == .constant(.null))
        #expect(try comparison("a IN {1, 'x', nil}").rhs == .array([.constant(1), .constant("x"), .constant(.null)]))
        #expect(try comparison("a IN {}").rhs == .array([]))
        #expect(
            try comparison("a == CAST(0, \"NSDate\")").rhs == .constant(.date(Date(timeIntervalSinceReferenceDate: 0))))
        #expect(
            try comparison("a == CAST('2001-01-01', 'NSDate')").rhs
                == .constant(.date(Date(timeIntervalSinceReferenceDate: 0))))
        let uuid = UUID()
        #expect(try comparison("a == CAST('\(uuid.uuidString)', 'NSUUID')").rhs == .constant(.uuid(uuid)))
        #expect(
            try comparison("a == CAST('1.25', 'NSDecimalNumber')").rhs == .constant(.decimal(Decimal(string: "1.25")!)))
    }

    /// Keywords match in any letter case without building strings for ASCII words; other words
    /// are upper-cased as Unicode does, and names and strings keep every scalar.
    @Test func wordsAndStringsKeepEveryScalar() throws {
        #expect(
            try FetchPredicate(format: "name BeginsWith[c] 'a' aNd NoT year < 3 Or any tags == nIL")
                == FetchPredicate(format: "name BEGINSWITH[c] 'a' AND NOT year < 3 OR ANY tags == NIL"))
        #expect(try comparison("größe_2 == 'ünïcödé 🎸'").lhs == .keyPath(["größe_2"]))
        #expect(try comparison("größe_2 == 'ünïcödé 🎸'").rhs == .constant("ünïcödé 🎸"))
        #expect(try comparison("band.名前 == \"\"").lhs == .keyPath(["band", "名前"]))
        #expect(try comparison("band.名前 == \"\"").rhs == .constant(""))
        // U+017F LATIN SMALL LETTER LONG S upper-cases to S: the word is the keyword SOME.
        #expect(try comparison("ſome tags == 1").modifier == .any)
        #expect(try comparison("somebody == 1").lhs == .keyPath(["somebody"]))
        #expect(try comparison("a\u{2003}==\u{0085}1").rhs == .constant(1))
    }

    @Test func keyPathsAndAggregates() throws {
        #expect(try comparison("band.name == 1").lhs == .keyPath(["band", "name"]))
        #expect(try comparison("#in == 1").lhs == .keyPath(["in"]))
        #expect(try comparison("albums.@count > 1").lhs == .aggregate(.count, collection: ["albums"], property: []))
        #expect(
            try comparison("albums.@sum.price > 1").lhs == .aggregate(.sum, collection: ["albums"], property: ["price"])
        )
        #expect(
            try comparison("band.albums.@AVG.tracks.seconds > 1").lhs
                == .aggregate(.avg, collection: ["band", "albums"], property: ["tracks", "seconds"]))
        #expect(
            try comparison("albums.@min.year < 1").lhs == .aggregate(.min, collection: ["albums"], property: ["year"]))
        #expect(
            try comparison("albums.@max.year < 1").lhs == .aggregate(.max, collection: ["albums"], property: ["year"]))
        #expect(try comparison("1 < year").lhs == .constant(1))
        #expect(try comparison("a == $name").rhs == .variable("name"))
    }

    @Test func listsTheKeyPathsItReads() throws {
        let predicate = try FetchPredicate("band.name == 'x' AND (albums.@sum.price > 1 OR NOT 3 < year)")
        #expect(predicate.keyPaths == [["band", "name"], ["albums", "price"], ["year"]])
    }

    @Test func arguments() throws {
        #expect(
            try comparison("%K == %@", "band.name", "x")
                == Comparison(.keyPath(["band", "name"]), .equal, .constant("x")))
        #expect(try comparison("a == %d", 7).rhs == .constant(7))
        #expect(try comparison("a == %d", 7.9).rhs == .constant(7))
        #expect(try comparison("a == %f", 7).rhs == .constant(7.0))
        #expect(try comparison("a IN %@", ["x", "y"]).rhs == .array([.constant("x"), .constant("y")]))
        #expect(try comparison("a == %@", Optional<String>.none).rhs == .constant(.null))
        #expect(
            try comparison("%K.@count == 1", "albums").lhs == .aggregate(.count, collection: ["albums"], property: []))
    }

    @Test func compoundStructureAndPrecedence() throws {
        let a = FetchPredicate.comparison(Comparison(.keyPath(["a"]), .equal, .constant(1)))
        let b = FetchPredicate.comparison(Comparison(.keyPath(["b"]), .equal, .constant(2)))
        let c = FetchPredicate.comparison(Comparison(.keyPath(["c"]), .equal, .constant(3)))
        #expect(try FetchPredicate("a == 1 OR b == 2 AND c == 3") == .or([a, .and([b, c])]))
        #expect(try FetchPredicate("(a == 1 OR b == 2) AND c == 3") == .and([.or([a, b]), c]))
        #expect(try FetchPredicate("a == 1 AND b == 2 AND c == 3") == .and([a, b, c]))
        #expect(try FetchPredicate("a == 1 && b == 2 || c == 3") == .or([.and([a, b]), c]))
        #expect(try FetchPredicate("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try FetchPredicate("!(a == 1 OR b == 2)") == .not(.or([a, b])))
        #expect(try FetchPredicate("TRUEPREDICATE") == .true)
        #expect(try FetchPredicate("falsepredicate OR a == 1") == .or([.false, a]))
    }

    @Test(arguments: [
        ("name ==", 7, "expected a key path, a value"),
        ("name == 'unterminated", 8, "unterminated string"),
        ("name = = 1", 7, "expected a key path"),
        ("name 'x'", 5, "expected a comparison operator"),
        ("(a == 1", 7, "expected ')'"),
        ("a == 1 b == 2", 7, "expected AND, OR or end of input"),
        ("a ==[x] 1", 5, "unknown comparison option 'x'"),
        ("a == 1 & b == 2", 7, "expected '&&'"),
        ("a.@foo == 1", 2, "unknown aggregate '@foo'"),
        ("a.@sum == 1", 2, "@sum needs a key path after it"),
        ("a == %@", 5, "'%@' has no argument"),
        ("a == ^", 5, "unexpected character '^'"),
        ("a == CAST('x', 'NSDate')", 5, "cannot CAST"),
        ("a == CAST('x', 'Nope')", 15, "unknown CAST type"),
        ("a.in == 1", 2, "reserved word"),
        ("", 0, "expected a comparison"),
        ("a IN {1, 2", 10, "expected ',' or '}'"),
    ])
    func errorsPointAtTheOffset(_ format: String, _ offset: Int, _ message: String) throws {
        let error = #expect(throws: StoreChainError.self) { try FetchPredicate(format: format) }
        #expect(error?.code == .predicateSyntax)
        #expect(error?.location?.offset == offset, "\(error?.description ?? "")")
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func argumentErrors() throws {
        let extra = #expect(throws: StoreChainError.self) { try FetchPredicate("a == %@", 1, 2) }
        #expect(extra?.message.contains("2 arguments were given but the format uses 1") == true)
        let wrongKind = #expect(throws: StoreChainError.self) { try FetchPredicate("%K == 1", 5) }
        #expect(wrongKind?.message.contains("'%K' expects a key path string") == true)
        let notInteger = #expect(throws: StoreChainError.self) { try FetchPredicate("a == %d", "x") }
        #expect(notInteger?.message.contains("'%d' expects an integer") == true)
    }

    @Test func hostileNestingFailsCleanly() throws {
        let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        let error = #expect(throws: StoreChainError.self) { try FetchPredicate(format: deep) }
        #expect(error?.message.contains("nested deeper") == true)
        let nots = String(repeating: "NOT ", count: 10_000) + "a == 1"
        #expect(throws: StoreChainError.self) { try FetchPredicate(format: nots) }
    }

    /// One depth rule for a predicate and its canonical form: parentheses never count on their
    /// own, so whatever parses prints to text that parses to the same predicate, and whatever is
    /// too deep is too deep in both forms (found by fuzzing: 200 `!` parsed, their canonical
    /// `NOT (NOT (…))` did not).
    @Test func aPredicateAndItsCanonicalFormNestByOneRule() throws {
        for count in [200, 255] {
            let negations = try FetchPredicate(format: "id == 1 OR " + String(repeating: "!", count: count) + "id == 2")
            #expect(negations.nestingDepth == count + 1)
            #expect(try FetchPredicate(format: negations.format) == negations)
        }
        // OR over AND nests two levels per parenthesis; the canonical form writes both.
        var text = "a == 0"
        for level in 1...128 { text = "a == \(level) OR b == \(level) AND (\(text))" }
        let alternating = try FetchPredicate(format: text)
        #expect(alternating.nestingDepth == 256)
        #expect(try FetchPredicate(format: alternating.format) == alternating)

        let tooDeep = "id == 1 OR " + String(repeating: "!", count: 256) + "id == 2"
        let deepError = #expect(throws: StoreChainError.self) { try FetchPredicate(format: tooDeep) }
        #expect(deepError?.message.contains("nested deeper than 256 levels (NOT, AND and OR each count one)") == true)
        let canonical =
            "id == 1 OR " + String(repeating: "NOT (", count: 256) + "id == 2"
            + String(repeating: ")", count: 256)
        let canonicalError = #expect(throws: StoreChainError.self) { try FetchPredicate(format: canonical) }
        #expect(canonicalError?.message == deepError?.message)
    }
}
