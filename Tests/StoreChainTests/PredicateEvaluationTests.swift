import Foundation
@_spi(Internals) import StoreChain
import Testing

/// The evaluator against answers computed by hand from `Fixtures.recordsJSON`.
@Suite struct PredicateEvaluationTests {
    let store: InMemoryStore

    init() throws {
        store = try Fixtures.store()
    }

    func keys(_ entity: String, _ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> [Int] {
        try Fixtures.keys(store, entity, FetchPredicate(format: format, arguments: arguments.map(\.predicateArgument)))
    }

    @Test(arguments: [
        ("name == \"Rue Royale\"", [1]),
        ("name = 'Rue Royale'", [1]),
        ("name ==[c] \"rue royale\"", [1]),
        ("name == \"rue royale\"", []),
        ("name ==[d] \"Sigur Ros\"", [2]),
        ("name ==[cd] \"sigur ros\"", [2]),
        ("name ==[c] \"sigur ros\"", []),
        ("name != \"Rue Royale\"", [2, 3, 4]),
        ("name <> \"Rue Royale\"", [2, 3, 4]),
        ("country < \"US\"", [1, 2]),
        ("country >= \"UK\"", [1, 4]),
        ("country =< \"IS\"", [2]),
        ("country => \"US\"", [4]),
    ])
    func stringComparisons(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Band", format) == expected)
    }

    @Test(arguments: [
        ("country == nil", [3]),
        ("country == NULL", [3]),
        ("country != nil", [1, 2, 4]),
        ("country != \"UK\"", [2, 3, 4]),
        ("country < \"ZZ\"", [1, 2, 4]),
        ("country > \"\"", [1, 2, 4]),
        ("country BEGINSWITH \"\"", [1, 2, 4]),
        ("NOT country == \"UK\"", [2, 3, 4]),
        ("founded < CAST(\"3000-01-01\", \"NSDate\")", [1, 2]),
        ("active == TRUE", [1, 3]),
        ("active == NO", [2]),
        ("active != YES", [2, 4]),
    ])
    func nilRules(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Band", format) == expected)
    }

    @Test(arguments: [
        ("name BEGINSWITH \"Rue\"", [1]),
        ("name BEGINSWITH \"rue\"", []),
        ("name BEGINSWITH[c] \"rue\"", [1]),
        ("name ENDSWITH \"e\"", [1, 3]),
        ("name ENDSWITH[c] \"crue\"", []),
        ("name ENDSWITH[cd] \"crue\"", [3]),
        ("name CONTAINS \"o\"", [1, 4]),
        ("name CONTAINS[d] \"o\"", [1, 2, 3, 4]),
        ("name CONTAINS[c] \"R\"", [1, 2, 3]),
        ("name LIKE \"R*e\"", [1]),
        ("name LIKE \"Rue\"", []),
        ("name LIKE \"?ow\"", [4]),
        ("name LIKE[c] \"LO?\"", [4]),
        ("name LIKE \"*\"", [1, 2, 3, 4]),
        ("name LIKE[cd] \"*crue\"", [3]),
        ("name MATCHES \"R.* R.*\"", [1]),
        ("name MATCHES \"o\"", []),
        ("name MATCHES \"low|Low\"", [4]),
        ("name MATCHES[c] \"LOW\"", [4]),
        ("name MATCHES[cd] \"sigur ros\"", [2]),
    ])
    func stringOperators(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Band", format) == expected)
    }

    @Test(arguments: [
        ("price > 9", [10, 20, 21]),
        ("price < 9", [30, 31]),
        ("price == 10", [21]),
        ("price == 10.0", [21]),
        ("price <= 8", [30, 31]),
        ("year >= 2005", [10, 11, 21]),
        ("year > 1990.5", [10, 11, 20, 21]),
        ("year == nil", [31]),
        ("NOT year > 2000", [20, 30, 31]),
        ("NOT (year > 2000)", [20, 30, 31]),
        ("!(year > 2000)", [20, 30, 31]),
        ("year IN {1989, 2005, 3000}", [21, 30]),
        ("year BETWEEN {1999, 2010}", [10, 20, 21]),
        ("price BETWEEN {7.5, 9.99}", [10, 30, 31]),
        ("title IN[c] {\"SHOUT\", \"takk...\"}", [21, 31]),
        ("title IN {\"SHOUT\"}", []),
        ("year > 2000 AND price != nil", [10, 21]),
        ("year > 2000 && price != nil", [10, 21]),
        ("year < 1990 OR year > 2010", [11, 30]),
        ("year < 1990 || year > 2010", [11, 30]),
        ("id == 10 OR id == 20 AND price > 100", [10]),
        ("(id == 10 OR id == 20) AND price > 10", [20]),
        ("TRUEPREDICATE", [10, 11, 20, 21, 30, 31]),
        ("FALSEPREDICATE", []),
    ])
    func numbersAndLogic(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Album", format) == expected)
    }

    /// `BEGINSWITH[c]` with an ASCII prefix compares bytes while the value is ASCII and folds it
    /// otherwise: the same answers as folding every value.
    @Test func caseInsensitivePrefixesAgreeWithFoldingTheWholeValue() throws {
        let model = try ObjectModel([
            EntityDescription(
                "Album", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("title", .string)])
        ])
        let titles = [
            "", "s", "S", "Silver", "sILVER", "Ärger", "ärger", "straße", "STRASSE", "İstanbul", "istanbul",
            "Σίσυφος", "s\u{0307}ilver", "e\u{0301}te", "É", "[Silver]", "@home", "Zebra", "ſilver",
        ]
        let nodes =
            titles.enumerated().map { index, title in
                Node(
                    id: ObjectID(entity: "Album", key: .integer(index)),
                    attributes: ["id": .integer(index), "title": .string(title)])
            } + [Node(id: ObjectID(entity: "Album", key: 99), attributes: ["id": 99])]
        for prefix in ["", "s", "S", "si", "SILV", "str", "strasse", "i", "e", "[s", "@", "z", "x"] {
            let predicate = try CompiledPredicate(
                FetchPredicate.comparison(
                    Comparison(.keyPath(["title"]), .beginsWith, .constant(.string(prefix)), options: .caseInsensitive)),
                entity: "Album", model: model)
            for node in nodes {
                let expected: Bool
                if case .string(let title) = node.attributes["title"] {
                    expected = title.lowercased().utf8.starts(with: prefix.lowercased().utf8)
                } else {
                    expected = false
                }
                #expect(predicate.evaluate(node, in: EmptyNodeSource()) == expected, "\(node) BEGINSWITH[c] \(prefix)")
            }
        }
    }

    @Test func dates() throws {
        #expect(
            try keys("Band", "founded BETWEEN {CAST(\"1990-01-01\", \"NSDate\"), CAST(\"2000-01-01\", \"NSDate\")}")
                == [2])
        #expect(try keys("Band", "founded > \"2000-01-01\"") == [1])
        #expect(try keys("Band", "founded > %@", Fixtures.date("2000-01-01")) == [1])
        // 2006-03-01 is 1,885 days (162,864,000 seconds) after 2001-01-01, NSDate's reference date.
        #expect(try keys("Band", "founded == CAST(162864000, \"NSDate\")") == [1])
    }

    @Test(arguments: [
        ("band.name BEGINSWITH \"Sig\"", [20, 21]),
        ("band.country == nil", [30, 31]),
        ("band == nil", []),
        ("band != nil", [10, 11, 20, 21, 30, 31]),
        ("band.active == TRUE AND year > 2000", [10, 11]),
    ])
    func toOneKeyPaths(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Album", format) == expected)
    }

    @Test func keyPathThroughTwoToOneRelationships() throws {
        #expect(try keys("Track", "album.band.name == \"Rue Royale\"") == [100, 101, 110])
        #expect(try keys("Track", "album.band.name ==[cd] \"SIGUR ROS\" AND seconds < 500") == [201, 210])
    }

    @Test(arguments: [
        ("ANY albums.year < 1995", [3]),
        ("SOME albums.year < 1995", [3]),
        ("ANY albums.year > 2000", [1, 2]),
        ("ALL albums.year > 2000", [1, 4]),
        ("NONE albums.year > 2000", [3, 4]),
        ("ANY albums.title CONTAINS[c] \"escape\"", [1]),
        ("ANY albums.price == nil", [1]),
        ("ANY albums.tracks.seconds > 600", [2]),
        ("ALL albums.tracks.seconds < 400", [1, 3, 4]),
        ("ANY albums.year IN {1989, 2013}", [1, 3]),
        ("NOT ANY albums.year > 2000", [3, 4]),
    ])
    func toManyModifiers(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Band", format) == expected)
    }

    @Test(arguments: [
        ("albums.@count == 2", [1, 2, 3]),
        ("albums.@count == 0", [4]),
        ("albums.@sum.price > 20", [2]),
        ("albums.@avg.price < 9", [3]),
        ("albums.@max.year == 2013", [1]),
        ("albums.@min.year < 2000", [2, 3]),
        ("albums.tracks.@count >= 3", [1, 2]),
    ])
    func aggregatesOverBands(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Band", format) == expected)
    }

    @Test(arguments: [
        ("tracks.@count > 1", [10, 20]),
        ("tracks.@sum.seconds > 500", [10, 20]),
        ("tracks.@avg.seconds > 300", [20, 21]),
        ("tracks.@max.seconds >= 375", [20, 21]),
        ("tracks.@min.seconds < 200", [11]),
        ("tracks.@avg.seconds == nil", [31]),
        ("tracks.@sum.seconds == 0", [31]),
    ])
    func aggregatesOverAlbums(_ format: String, _ expected: [Int]) throws {
        #expect(try keys("Album", format) == expected)
    }

    @Test func formatArguments() throws {
        #expect(try keys("Band", "%K ==[c] %@", "name", "LOW") == [4])
        #expect(try keys("Album", "band.%K == %@", "name", "Sigur Rós") == [20, 21])
        #expect(try keys("Album", "year > %d", 2005) == [10, 11])
        #expect(try keys("Album", "year > %i", 2005) == [10, 11])
        #expect(try keys("Album", "price > %f", 9.5) == [10, 20, 21])
        #expect(try keys("Album", "id IN %@", [10, 20, 99]) == [10, 20])
        #expect(try keys("Album", "title == %@ OR year == %@", "Shout", Optional<Int>.none) == [31])
        #expect(try keys("Band", "%K.@count == %d", "albums", 0) == [4])
    }

    @Test func variables() throws {
        let template = try FetchPredicate("year > $from AND year < $to")
        #expect(template.variables == ["from", "to"])
        let bound = try template.substituting(["from": 2000, "to": 2011])
        #expect(try Fixtures.keys(store, "Album", bound) == [10, 21])
        #expect(throws: StoreChainError.self) { try template.substituting(["from": 2000]) }
        let unbound = FetchRequest(entity: "Album", predicate: template)
        let error = #expect(throws: StoreChainError.self) { try store.fetch(unbound) }
        #expect(error?.message.contains("$from") == true)
    }

    @Test func compiledPredicateEvaluatesStandaloneNodes() throws {
        let model = try Fixtures.model()
        let filter = try CompiledPredicate(
            FetchPredicate("name BEGINSWITH[c] 'a' AND founded == nil"), entity: "Band", model: model)
        let node = Node(id: ObjectID(entity: "Band", key: 9), attributes: ["id": 9, "name": "Arcade"])
        #expect(filter.evaluate(node))
        #expect(!filter.evaluate(Node(id: node.id, attributes: ["id": 9, "name": "Zed"])))
    }

    /// AND and OR of none, one, two and many operands (compiled into a tree of closures) give
    /// what their operands give one by one.
    @Test func andAndOrOfAnyNumberOfOperandsAgreeWithTheirOperands() throws {
        let model = try Fixtures.model()
        let nodes = (0..<20).map { key in
            Node(id: ObjectID(entity: "Band", key: .integer(key)), attributes: ["id": .integer(key), "name": "b"])
        }
        var random = SplitMix64(seed: 16)
        for count in [0, 1, 2, 3, 4, 5, 8, 13] {
            let operands = try (0..<count).map { _ in
                try FetchPredicate(
                    "id \(["<", ">=", "==", "!="].randomElement(using: &random) ?? "==") \(Int.random(in: 0..<20, using: &random))"
                )
            }
            let each = try operands.map { try CompiledPredicate($0, entity: "Band", model: model) }
            let all = try CompiledPredicate(.and(operands), entity: "Band", model: model)
            let any = try CompiledPredicate(.or(operands), entity: "Band", model: model)
            for node in nodes {
                let expectedAll = each.allSatisfy { $0.evaluate(node) }
                let expectedAny = each.contains { $0.evaluate(node) }
                #expect(all.evaluate(node) == expectedAll, "AND of \(operands) on \(node.id)")
                #expect(any.evaluate(node) == expectedAny, "OR of \(operands) on \(node.id)")
            }
        }
    }

    @Test func missingRelatedObjectReadsAsNil() throws {
        let model = try Fixtures.model()
        let filter = try CompiledPredicate(FetchPredicate("band.name == nil"), entity: "Album", model: model)
        let orphan = Node(
            id: ObjectID(entity: "Album", key: 1), attributes: ["id": 1, "title": "x"],
            relationships: ["band": .toOne(ObjectID(entity: "Band", key: 404))])
        #expect(filter.evaluate(orphan, in: EmptyNodeSource()))
    }
}
