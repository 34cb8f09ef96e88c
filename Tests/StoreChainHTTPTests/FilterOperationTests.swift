import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainHTTP

/// Strict bounds, suffixes, not-equal and nil tests are pushed to a backend that can make them,
/// with SQL's treatment of a missing value: its `<>` leaves out the records without one, which
/// `!=` keeps, so not-equal is pushed only where the key path always has a value. The backend
/// here filters as django-filter over SQL does, and ignores a lookup it does not know.
@Suite struct FilterOperationTests {
    /// Albums (`RemoteFixtures`): `title`, and `year`, which may be nil.
    static func model() throws -> ObjectModel { try RemoteFixtures.model() }

    /// Albums 1–6 released 1991–1996; album 7 has no year.
    static let albums: [(id: Int, title: String, year: Int?)] =
        (1...6).map { ($0, "Album \($0)", 1990 + $0) } + [(7, "Album 7", nil)]

    typealias Album = (id: Int, title: String, year: Int?)

    /// The albums a `{field}__{lookup}` query selects, as SQL would (a comparison with NULL is
    /// not true; `LIKE` folds ASCII letters only); lookups it does not know are ignored, as
    /// django-filter ignores them.
    static func sqlFiltered(_ albums: [Album], _ items: [URLQueryItem]) -> [Album] {
        func asciiLowercased(_ text: String) -> String {
            let scalars = text.unicodeScalars.map { scalar in
                ("A"..."Z").contains(scalar) ? Unicode.Scalar(UInt8(truncatingIfNeeded: scalar.value + 32)) : scalar
            }
            return String(String.UnicodeScalarView(scalars))
        }
        return albums.filter { album in
            items.allSatisfy { item in
                let parts = item.name.components(separatedBy: "__")
                guard parts.count == 2, let text = item.value else { return true }
                let value: Any? =
                    switch parts[0] {
                    case "id": album.id
                    case "title": album.title
                    case "year": album.year
                    default: nil
                    }
                switch (parts[1], value) {
                case ("isnull", _): return (value == nil) == (text == "true")
                case (_, nil): return false
                case ("exact", let value?): return "\(value)" == text
                case ("ne", let value?): return "\(value)" != text
                case ("notin", let value?): return !text.components(separatedBy: ",").contains("\(value)")
                case ("in", let value?): return text.components(separatedBy: ",").contains("\(value)")
                case ("endswith", let value as String): return value.hasSuffix(text)
                case ("icontains", let value as String): return asciiLowercased(value).contains(asciiLowercased(text))
                case ("gt", let value as Int): return value > Int(text) ?? .max
                case ("lt", let value as Int): return value < Int(text) ?? .min
                default: return true
                }
            }
        }
    }

    static func run(_ grammars: [FilterGrammar], _ format: String, albums: [Album] = albums) async throws -> (
        keys: [Int], query: [String: String]
    ) {
        let transport = StubTransport { request in
            let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let records = sqlFiltered(albums, items).map { album in
                #"{"id": \#(album.id), "title": "\#(album.title)", "year": \#(album.year.map(String.init) ?? "null")}"#
            }
            return .json("[" + records.joined(separator: ", ") + "]")
        }
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!,
            entities: ["Album": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /albums", filters: grammars)])])
        let remote = try RemoteResponder(model: try model(), options: options, transport: transport, environment: [:])
        let result = try await Chain(handlers: [], terminal: remote).fetch(
            FetchRequest(entity: "Album", predicate: try FetchPredicate(format), sortDescriptors: [.init("id")]))
        guard case .objects(let nodes) = result, let request = transport.requests.first else { return ([], [:]) }
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return (
            nodes.compactMap { if case .integer(let key)? = $0.id.key { key } else { nil } },
            Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        )
    }

    static let djangoFilter = FilterGrammar(
        parameter: "{field}__{lookup}",
        lookups: [
            .init(.equal, "exact"), .init(.notEqual, "ne"), .init(.greater, "gt"), .init(.less, "lt"),
            .init(.endsWith, "endswith"), .init(.isNull, "isnull"), .init(.notOneOf, "notin"),
        ],
        fields: ["id": "id", "title": "title", "year": "year"])

    @Test func strictBoundsSuffixesAndNilTestsArePushed() async throws {
        var (keys, query) = try await Self.run(
            [Self.djangoFilter], #"year > 1991 AND year < 1995 AND title ENDSWITH "3""#)
        #expect(query == ["year__gt": "1991", "year__lt": "1995", "title__endswith": "3"])
        #expect(keys == [3])

        (keys, query) = try await Self.run([Self.djangoFilter], "year == nil")
        #expect(query == ["year__isnull": "true"])
        #expect(keys == [7])

        (keys, query) = try await Self.run([Self.djangoFilter], "year != nil AND id > 4")
        #expect(query == ["year__isnull": "false", "id__gt": "4"])
        #expect(keys == [5, 6])

        // An ends-with lookup could serve equality too, but the exact one is enough; a strict
        // bound serves nothing but itself (`>=` is filtered in memory).
        (keys, query) = try await Self.run([Self.djangoFilter], #"title == "Album 2" AND year >= 1992"#)
        #expect(query == ["title__exact": "Album 2"])
        #expect(keys == [2])
    }

    /// An OR of equalities of one key path is a one-of: pushed as `year__in`, its count the
    /// backend's. Before, no OR was pushed at all: every record was read and filtered in memory.
    @Test func anOrOfEqualitiesOfOneKeyPathIsPushedAsOneOf() async throws {
        let grammar = FilterGrammar(
            parameter: "{field}__{lookup}", lookups: [.init(.equal, "exact"), .init(.oneOf, "in")],
            fields: ["id": "id", "title": "title", "year": "year"])
        var (keys, query) = try await Self.run([grammar], "year == 1992 OR (year == 1995 OR year IN {1996})")
        #expect(query == ["year__in": "1992,1995,1996"])
        #expect(keys == [2, 5, 6])

        (keys, query) = try await Self.run([grammar], #"id > 1 AND (title == "Album 2" OR title == "Album 4")"#)
        #expect(query == ["title__in": "Album 2,Album 4"])
        #expect(keys == [2, 4])

        // Not a one-of: two key paths, a nil (which `IN` on the backend would not match), a
        // quantifier; read whole and filtered in memory.
        for (format, expected) in [
            (#"year == 1992 OR title == "Album 4""#, [2, 4]), ("year == nil OR year == 1992", [2, 7]),
            ("year == 1992 OR year > 1995", [2, 6]),
        ] {
            (keys, query) = try await Self.run([grammar], format)
            #expect(query.isEmpty, "\(format)")
            #expect(keys == expected, "\(format)")
        }
    }

    @Test func notEqualIsPushedOnlyWhereTheKeyPathAlwaysHasAValue() async throws {
        // `year` may be nil: SQL's `year <> 1993` would leave out album 7, which `!=` keeps.
        var (keys, query) = try await Self.run([Self.djangoFilter], #"title != "Album 2" AND year != 1993"#)
        #expect(query == ["title__ne": "Album 2"])
        #expect(keys == [1, 4, 5, 6, 7])

        // A backend that leaves out exact matches serves a case-insensitive `!=` too: it keeps
        // more, and the rest is filtered in memory. A [d] comparison is served the same way
        // (by both lookups that can leave the value out, neither of them exact).
        (keys, query) = try await Self.run([Self.djangoFilter], #"title !=[cd] "älbum 3""#)
        #expect(query == ["title__ne": "älbum 3", "title__notin": "älbum 3"])
        #expect(keys == [1, 2, 4, 5, 6, 7])

        // NOT IN the same way: pushed for `title`, filtered in memory for `year`.
        (keys, query) = try await Self.run(
            [Self.djangoFilter], #"NOT (title IN {"Album 1", "Album 2"}) AND NOT (year IN {1993}) AND NOT (id == 5)"#)
        #expect(query == ["title__notin": "Album 1,Album 2", "id__ne": "5"])
        #expect(keys == [4, 6, 7])
    }

    @Test func eachGrammarNamesTheFieldsThatTakeItsLookups() async throws {
        // A text grammar and a number grammar: `title >= …` has no lookup (django-filter would
        // ignore a `title__gte` it does not declare, and the answer would be taken as filtered).
        let text = FilterGrammar(
            parameter: "{field}__{lookup}", lookups: [.init(.equal, "exact"), .init(.endsWith, "endswith")],
            fields: ["title": "title"])
        let number = FilterGrammar(
            parameter: "{field}__{lookup}", lookups: [.init(.atLeast, "gte"), .init(.greater, "gt")],
            fields: ["year": "year", "id": "id"])
        let (keys, query) = try await Self.run(
            [text, number], #"title >= "Album 3" AND year > 1993 AND title ENDSWITH "5""#)
        // `year > 1993` is pushed by its exact lookup alone (`gte` would be a looser second).
        #expect(query == ["year__gt": "1993", "title__endswith": "5"])
        #expect(keys == [5])
    }
}

extension FilterOperationTests {
    @Test func anASCIIFoldingLookupServesOnlyValuesItFoldsAsUnicodeDoes() async throws {
        let like = FilterGrammar(
            parameter: "{field}__{lookup}", lookups: [.init(.contains, "icontains", caseInsensitive: true)],
            fields: ["title": "title"], caseFolding: .ascii)
        // U+212A KELVIN SIGN lowercases to "k", U+0130 to "i" and a combining dot.
        let albums: [Album] = [
            (1, "\u{212A}ilo", nil), (2, "kite", nil), (3, "OLE", nil), (4, "Olé", nil), (5, "\u{130}stanbul", nil),
        ]
        var (keys, query) = try await Self.run([like], #"title CONTAINS[c] "ole""#, albums: albums)
        #expect(query == ["title__icontains": "ole"])
        #expect(keys == [3])
        // SQLite's LIKE would miss the Kelvin sign: "ki" is matched in memory.
        (keys, query) = try await Self.run([like], #"title CONTAINS[c] "ki""#, albums: albums)
        #expect(query == [:])
        #expect(keys == [1, 2])
        (keys, query) = try await Self.run([like], #"title CONTAINS[c] "i""#, albums: albums)
        #expect(query == [:])
        #expect(keys == [1, 2, 5])
        // Non-ASCII values are matched in memory; a case-sensitive comparison is served (more
        // comes back, the rest is filtered).
        (keys, query) = try await Self.run([like], #"title CONTAINS[c] "olé""#, albums: albums)
        #expect(query == [:])
        #expect(keys == [4])
        (keys, query) = try await Self.run([like], #"title CONTAINS "OL""#, albums: albums)
        #expect(query == ["title__icontains": "OL"])
        #expect(keys == [3])
    }

    /// A `LIKE` that does not escape its value (Datasette's) reads `%` and `_` as wildcards:
    /// such a value is pushed, but what comes back is not taken as exactly what was asked.
    @Test func aValueWithLikeWildcardsIsPushedButNotTakenAsExact() throws {
        let model = try Self.model()
        let like = FilterGrammar(
            parameter: "{field}__{lookup}", lookups: [.init(.contains, "contains", caseInsensitive: true)],
            fields: ["title": "title"], caseFolding: .ascii)
        let planner = try QueryPlanner(
            entity: try model.requireEntity("Album"),
            options: RemoteEntityOptions(fetch: [RemoteEndpoint("GET /albums", filters: [like])]), model: model)
        let plain = try planner.plan(predicate: try FetchPredicate(#"title CONTAINS[c] "ol""#), sort: [])
        #expect(plain.values.values.sorted() == ["ol"] && plain.filterApplied)
        for value in ["o_l", "o%l"] {
            let wild = try planner.plan(predicate: try FetchPredicate(#"title CONTAINS[c] "\#(value)""#), sort: [])
            #expect(wild.values.values.sorted() == [value] && !wild.filterApplied)
        }
    }

    /// The proof behind `foldsAlikeInASCII`: no other scalar lowercases to an ASCII character.
    @Test func onlyTwoNonASCIIScalarsLowercaseToASCII() {
        let found = (0x80...0x10FFFF).compactMap(Unicode.Scalar.init).filter { scalar in
            String(scalar).lowercased().unicodeScalars.contains { $0.isASCII }
        }
        #expect(found.map(\.value) == [0x130, 0x212A])
    }
}
