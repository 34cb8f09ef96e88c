import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A filter grammar declared once pushes every comparison the backend can make on every field
/// it names, spelled as the backend wants: JSON:API's `filter[{field}][{lookup}]`, PostgREST's
/// `{field}={lookup}.{value}`. What it cannot spell is filtered in memory.
@Suite struct FilterGrammarTests {
    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("name", .string),
                    AttributeDescription("founded", .integer),
                ])
        ])
    }

    static let bands = (1...6).map { #"{"id": \#($0), "name": "Band \#($0)", "founded": \#(1990 + $0)}"# }

    static func run(_ grammar: FilterGrammar, _ format: String) async throws -> (keys: [Int], query: [String: String]) {
        let transport = StubTransport { _ in .json("[" + Self.bands.joined(separator: ", ") + "]") }
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!,
            entities: ["Band": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /bands", filter: grammar)])])
        let remote = try RemoteResponder(model: try model(), options: options, transport: transport, environment: [:])
        let result = try await Chain(handlers: [], terminal: remote).fetch(
            FetchRequest(entity: "Band", predicate: try FetchPredicate(format)))
        guard case .objects(let nodes) = result, let request = transport.requests.first else { return ([], [:]) }
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return (
            nodes.compactMap { if case .integer(let key)? = $0.id.key { key } else { nil } },
            Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        )
    }

    @Test func jsonAPIStyleFiltersArePushedForEveryFieldAndLookup() async throws {
        let grammar = FilterGrammar(
            parameter: "filter[{field}][{lookup}]",
            lookups: [
                .init(.equal, "eq"), .init(.beginsWith, "prefix", caseInsensitive: true), .init(.atLeast, "gte"),
                .init(.oneOf, "in"),
            ],
            fields: ["id": "id", "name": "name", "founded": "founded"])
        let (keys, query) = try await Self.run(
            grammar, #"name BEGINSWITH[c] "band" AND founded >= 1993 AND id IN {2, 4, 5}"#)
        #expect(query == ["filter[name][prefix]": "band", "filter[founded][gte]": "1993", "filter[id][in]": "2,4,5"])
        // The stub ignores every filter: what comes back is re-checked in memory.
        #expect(keys == [4, 5])
    }

    @Test func postgRESTStyleFiltersPutTheLookupInTheValue() async throws {
        let grammar = FilterGrammar(
            parameter: "{field}", value: "{lookup}.{value}", lookups: [.init(.equal, "eq"), .init(.atMost, "lte")],
            fields: ["name": "name", "founded": "founded_year"])
        let (keys, query) = try await Self.run(grammar, #"founded <= 1994 AND name CONTAINS "d""#)
        // No contains lookup is declared: that part is filtered in memory only.
        #expect(query == ["founded_year": "lte.1994"])
        #expect(keys == [1, 2, 3, 4])
    }
}
