import Foundation
import StoreChain
import Testing

@Suite struct PredicateFormatTests {
    @Test(arguments: [
        ("name = 'x'", "name == \"x\""),
        ("a <> 1 && b =< 2 || c => 3", "(a != 1 AND b <= 2) OR c >= 3"),
        ("SOME albums.year > 1990", "ANY albums.year > 1990"),
        ("name beginswith[dc] 'r'", "name BEGINSWITH[cd] \"r\""),
        ("!(a == 1)", "NOT (a == 1)"),
        ("a == YES", "a == TRUE"),
        ("a == NULL", "a == nil"),
        ("a IN {1,2 ,3}", "a IN {1, 2, 3}"),
        ("#size == 1 AND #in == 2", "size == 1 AND #in == 2"),
        ("albums.@COUNT > 1", "albums.@count > 1"),
        ("a == CAST('2001-01-02', 'NSDate')", "a == CAST(86400.0, \"NSDate\")"),
        ("a == 'tab\\there'", "a == \"tab\\there\""),
        ("a == 1 AND (b == 2 AND c == 3)", "a == 1 AND (b == 2 AND c == 3)"),
    ])
    func canonicalForms(_ input: String, _ canonical: String) throws {
        let predicate = try FetchPredicate(format: input)
        #expect(predicate.format == canonical)
        #expect(try FetchPredicate(format: canonical) == predicate)
    }

    @Test func argumentsPrintAsLiterals() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let predicate = try FetchPredicate(
            "a == %@ AND b == %@ AND c == %@ AND d == %@", uuid, URL(string: "https://x.example/a?b=1")!,
            Decimal(string: "12.50")!, Data([1, 2, 3]))
        #expect(
            predicate.format
                == "a == CAST(\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\", \"NSUUID\") AND b == CAST(\"https://x.example/a?b=1\", \"NSURL\") AND c == CAST(\"12.5\", \"NSDecimalNumber\") AND d == CAST(\"AQID\", \"NSData\")"
        )
        #expect(try FetchPredicate(format: predicate.format) == predicate)
    }

    /// parse(print(p)) == p for thousands of generated predicates covering every construct.
    @Test func roundTripOfGeneratedPredicates() throws {
        var generator = PredicateGenerator(seed: 20_261_122)
        for _ in 0..<5_000 {
            let predicate = generator.predicate(depth: 0)
            let text = predicate.format
            let parsed: FetchPredicate
            do {
                parsed = try FetchPredicate(format: text)
            } catch {
                Issue.record("\(text) did not parse: \(error)")
                return
            }
            #expect(parsed == predicate, "\(text) parsed back to \(parsed.format)")
            #expect(parsed.format == text)
        }
    }
}

/// Random predicates over every operator, modifier, option, literal kind and nesting.
struct PredicateGenerator {
    typealias Comparison = StoreChain.Comparison
    var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    mutating func predicate(depth: Int) -> FetchPredicate {
        let roll = random.int(depth > 2 ? 6 : 10)
        switch roll {
        case 0: return .true
        case 1: return .false
        case 6: return .and((0..<(2 + random.int(3))).map { _ in predicate(depth: depth + 1) })
        case 7: return .or((0..<(2 + random.int(3))).map { _ in predicate(depth: depth + 1) })
        case 8, 9: return .not(predicate(depth: depth + 1))
        default: return .comparison(comparison())
        }
    }

    mutating func comparison() -> Comparison {
        let op = Comparison.Operator.allCases[random.int(Comparison.Operator.allCases.count)]
        let modifier = Comparison.Modifier.allCases[random.int(Comparison.Modifier.allCases.count)]
        var options: Comparison.Options = []
        if random.int(3) == 0 { options.insert(.caseInsensitive) }
        if random.int(3) == 0 { options.insert(.diacriticInsensitive) }
        let lhs: Operand = random.int(8) == 0 ? .constant(value()) : keyPathOrAggregate()
        let rhs: Operand =
            switch random.int(6) {
            case 0: keyPathOrAggregate()
            case 1: .variable(name())
            case 2:
                .array(
                    (0..<random.int(4)).map { _ in
                        random.int(5) == 0 ? .array([.constant(value())]) : .constant(value())
                    })
            default: .constant(value())
            }
        return Comparison(lhs, op, rhs, options: options, modifier: modifier)
    }

    mutating func keyPathOrAggregate() -> Operand {
        if random.int(4) == 0 {
            let function = Operand.Aggregate.allCases[random.int(5)]
            return .aggregate(function, collection: keyPath(), property: function == .count ? [] : keyPath())
        }
        return .keyPath(keyPath())
    }

    mutating func keyPath() -> [String] {
        (0..<(1 + random.int(3))).map { _ in name() }
    }

    mutating func name() -> String {
        let names = ["name", "year", "band", "albums", "in", "AND", "size", "_private", "x1", "ümlaut", "SELF", "cast"]
        return names[random.int(names.count)]
    }

    mutating func value() -> Value {
        switch random.int(12) {
        case 0: return .null
        case 1: return .bool(random.int(2) == 0)
        case 2: return .integer(random.int(3) == 0 ? Int.min + random.int(10) : random.int(2_000_001) - 1_000_000)
        case 3:
            let doubles = [0.5, -1.25, 1e300, 1e-7, 123_456.789, -0.0, .infinity, -.infinity, 3.0]
            return .double(random.int(2) == 0 ? doubles[random.int(doubles.count)] : random.double() * 1e6)
        case 4: return .date(Date(timeIntervalSinceReferenceDate: (random.double() - 0.5) * 4e9))
        case 5: return .uuid(UUID())
        case 6: return .url(URL(string: "https://music.example/bands/\(random.int(1000))?q=a%20b")!)
        case 7: return .decimal(Decimal(string: "\(random.int(100_000)).\(random.int(100))")!)
        case 8: return .data(Data((0..<random.int(6)).map { _ in UInt8(random.int(256)) }))
        case 9: return .json(.object(["a": .array([.integer(1), .string("q\"")]), "b": .double(2.5), "c": .null]))
        default: return .string(string())
        }
    }

    mutating func string() -> String {
        let pieces = [
            "a", "Z", " ", "\"", "'", "\\", "\n", "\t", "\r", "\u{0}", "\u{7}", "é", "e\u{301}", "\u{301}", "🎸",
            "👩‍👩‍👧", "$", "%@", "{", "AND", "*", "?", "\u{7F}", "日本",
        ]
        return (0..<random.int(8)).map { _ in pieces[random.int(pieces.count)] }.joined()
    }
}

/// Deterministic draws, so a failing case can be reproduced from its seed.
struct SeededRandom {
    private var generator: SplitMix64

    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    mutating func int(_ upperBound: Int) -> Int {
        Int(generator.next() % UInt64(upperBound))
    }

    mutating func double() -> Double {
        Double(generator.next() >> 11) / Double(1 << 53)
    }
}
