import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A filter grammar declared once pushes every comparison the backend can make on every field
/// it names, spelled as the backend wants: JSON:API's `filter[{field}][{lookup}]`, PostgREST's
/// `{field}={lookup}.{value}`. What it cannot spell is filtered in memory.
@Suite struct FilterGrammarTests {
    /// Runs a fetch over albums against a backend that ignores these spellings (it filters only
    /// `{field}__{lookup}` parameters): what comes back is re-checked in memory.
    static func run(_ grammar: FilterGrammar, _ format: String) async throws -> (keys: [Int], query: [String: String]) {
        try await FilterOperationTests.run([grammar], format)
    }

    @Test func jsonAPIStyleFiltersArePushedForEveryFieldAndLookup() async throws {
        let grammar = FilterGrammar(
            parameter: "filter[{field}][{lookup}]",
            lookups: [
                .init(.equal, "eq"), .init(.beginsWith, "prefix", caseInsensitive: true), .init(.atLeast, "gte"),
                .init(.oneOf, "in"),
            ],
            fields: ["id": "id", "title": "title", "year": "year"])
        let (keys, query) = try await Self.run(
            grammar, #"title BEGINSWITH[c] "album" AND year >= 1993 AND id IN {2, 4, 5}"#)
        #expect(query == ["filter[title][prefix]": "album", "filter[year][gte]": "1993", "filter[id][in]": "2,4,5"])
        // The stub ignores every filter: what comes back is re-checked in memory.
        #expect(keys == [4, 5])
    }

    @Test func postgRESTStyleFiltersPutTheLookupInTheValue() async throws {
        let grammar = FilterGrammar(
            parameter: "{field}", value: "{lookup}.{value}", lookups: [.init(.equal, "eq"), .init(.atMost, "lte")],
            fields: ["title": "title", "year": "year_released"])
        let (keys, query) = try await Self.run(grammar, #"year <= 1994 AND title CONTAINS "m""#)
        // No contains lookup is declared: that part is filtered in memory only.
        #expect(query == ["year_released": "lte.1994"])
        #expect(keys == [1, 2, 3, 4])
    }

    /// OData's `$filter`: every comparison a part of one expression.
    static let odata = FilterGrammar(
        expression: .init(parameter: "$filter", null: "null"),
        lookups: [
            .init(.equal, "{field} eq {value}"), .init(.notEqual, "{field} ne {value}"),
            .init(.atLeast, "{field} ge {value}"), .init(.beginsWith, "startswith({field},{value})"),
            .init(.oneOf, "{field} in ({value})"),
        ],
        fields: ["id": "ID", "title": "Title", "year": "Year"])

    @Test func anExpressionGrammarWritesEveryPushedComparisonIntoOneParameter() async throws {
        var (keys, query) = try await Self.run(
            Self.odata, #"title BEGINSWITH "Album" AND year >= 1993 AND id IN {2, 4, 5}"#)
        #expect(query == ["$filter": "startswith(Title,'Album') and Year ge 1993 and ID in (2,4,5)"])
        // The stub ignores the expression: what comes back is re-checked in memory.
        #expect(keys == [4, 5])

        // Strings are quoted with the quote doubled inside; nil is the backend's null.
        (keys, query) = try await Self.run(Self.odata, #"title == "Album 'one'" OR title == "Album 3""#)
        #expect(query == ["$filter": "Title in ('Album ''one''','Album 3')"])
        #expect(keys == [3])
        (keys, query) = try await Self.run(Self.odata, "year == nil")
        #expect(query == ["$filter": "Year eq null"])
        #expect(keys == [7])
        (keys, query) = try await Self.run(Self.odata, "year != nil AND id >= 6")
        #expect(query == ["$filter": "Year ne null and ID ge 6"])
        #expect(keys == [6])

        // What the grammar cannot write is left out of the expression, and done in memory.
        (keys, query) = try await Self.run(Self.odata, #"title CONTAINS "3" AND year >= 1992"#)
        #expect(query == ["$filter": "Year ge 1992"])
        #expect(keys == [3])
        (keys, query) = try await Self.run(Self.odata, #"title CONTAINS "3""#)
        #expect(query["$filter"] == nil)
        #expect(keys == [3])
    }

    @Test func anOrTheExpressionWritesExactlyIsSentWhole() async throws {
        var grammar = Self.odata
        grammar.expression?.or = " or "
        var (keys, query) = try await Self.run(grammar, #"year == nil OR (id >= 5 AND title BEGINSWITH "Album")"#)
        #expect(query == ["$filter": "(Year eq null or (ID ge 5 and startswith(Title,'Album')))"])
        #expect(keys == [5, 6, 7])

        // Beside a conjunct; a nil among equalities is no one-of, so it is an OR too.
        (keys, query) = try await Self.run(grammar, #"id >= 2 AND (year == nil OR year == 1992 OR title == "Album 4")"#)
        #expect(query == ["$filter": "ID ge 2 and (Year eq null or Year eq 1992 or Title eq 'Album 4')"])
        #expect(keys == [2, 4, 7])

        // An operand the expression cannot write exactly (no contains pattern): the backend
        // would keep too little, so the OR is done in memory only.
        (keys, query) = try await Self.run(grammar, #"year == nil OR title CONTAINS "3""#)
        #expect(query["$filter"] == nil)
        #expect(keys == [3, 7])

        // Without `or` in the grammar, likewise.
        (keys, query) = try await Self.run(Self.odata, "year == nil OR id == 1")
        #expect(query["$filter"] == nil)
        #expect(keys == [1, 7])
    }
}
