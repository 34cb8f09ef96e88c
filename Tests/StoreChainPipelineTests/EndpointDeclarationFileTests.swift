import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

/// Mistakes in a fetch endpoint's declaration that validation used to call `ok`: a binding key
/// path the model does not have (a filter never pushed), a template variable nothing fills, a
/// paging variable missing from the template (the same page read again and again), a sort
/// value of a key the entity does not have, a binding of a variable the template lacks. All are
/// reported at once, each at its line, with the name it could have meant.
@Suite struct EndpointDeclarationFileTests {
    static let text = """
        model: music.model.yml
        terminal:
          remote:
            base-url: https://api.example/api
            entities:
              Band:
                fetch:
                  - request: GET /bands/?page={page}&ordering={ordering}&x={unbound}
                    paging: { pages: { page: page } }
                    sort: { variable: ordering, values: { nam: name } }
              Album:
                relationships: { band: { foreign-key: band } }
                fetch:
                  - request: GET /albums/?_next={next}&band__in={bands}
                    bind: { bands: { key-path: band.idd, operation: one-of }, year: year }
                    paging: { cursor: { variable: nxt, next: next } }
              Track:
                fetch: [GET /tracks/]

        """

    @Test func everyMistakeIsReportedAtOnceAtItsLine() throws {
        let folder = TemporaryFolder.make("storechain-endpoint-declaration")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        let failure = #expect(throws: ValidationFailure.self) {
            try Pipeline.parse(Self.text, source: "endpoints.yml", directory: folder)
        }
        let errors = failure?.errors ?? []
        func problem(_ text: String) -> StoreChainError? { errors.first { $0.message.contains(text) } }
        let unbound = problem("{unbound} in 'GET /bands/?page={page}&ordering={ordering}&x={unbound}' is never filled")
        #expect(unbound?.location?.line == 8, "\(errors)")
        let sort = problem("the sort value 'nam' reads 'nam' of Band")
        #expect(sort?.location?.line == 10, "\(errors)")
        #expect(sort?.suggestion?.contains("did you mean 'name'") == true, "\(errors)")
        let keyPath = problem("the binding {bands} reads 'band.idd' of Album")
        #expect(keyPath?.code == .unknownKeyPath && keyPath?.location?.line == 15, "\(errors)")
        #expect(keyPath?.suggestion?.contains("did you mean 'id'") == true, "\(errors)")
        let absent = problem("the binding {year} names a variable")
        #expect(absent?.location?.line == 15, "\(errors)")
        let paging = problem("the paging variable {nxt} is not in 'GET /albums/?_next={next}&band__in={bands}'")
        #expect(paging?.location?.line == 16, "\(errors)")
        #expect(paging?.suggestion?.contains("did you mean 'next'") == true, "\(errors)")
        // {next} is filled by nothing once the cursor variable is misspelt.
        #expect(problem("{next} in 'GET /albums/?_next={next}&band__in={bands}' is never filled") != nil, "\(errors)")
        #expect(errors.count == 6, "\(errors)")
    }

    @Test func aFilterGrammarIsReadAndItsMistakesAreLocated() throws {
        let folder = TemporaryFolder.make("storechain-filter-grammar")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        func pipeline(_ filter: String) -> String {
            """
            model: music.model.yml
            terminal:
              remote:
                base-url: https://api.example/api
                entities:
                  Band: { fetch: [GET /bands/] }
                  Album:
                    relationships: { band: { foreign-key: band } }
                    fetch:
                      - request: GET /albums/
                        filter:
            \(filter)
                  Track: { fetch: [GET /tracks/] }

            """
        }
        let good = try Pipeline.parse(
            pipeline(
                """
                              parameter: "{field}__{lookup}"
                              lookups: { equal: exact, "begins-with[c]": istartswith, one-of: in }
                              fields: { title: title, band.id: band }
                """), source: "filter.yml", directory: folder)
        let remote = try #require(good.terminal as? RemoteResponder)
        let grammar = try #require(remote.options.entities["Album"]?.fetch.first?.filters.first)
        #expect(grammar.parameter == "{field}__{lookup}" && grammar.value == "{value}")
        #expect(
            Set(grammar.lookups) == [
                .init(.equal, "exact"), .init(.beginsWith, "istartswith", caseInsensitive: true), .init(.oneOf, "in"),
            ])
        #expect(grammar.fields == ["title": "title", "band.id": "band"])

        // OData's one expression for every comparison.
        let odata = try Pipeline.parse(
            pipeline(
                """
                              expression: $filter
                              null: "null"
                              lookups: { equal: "{field} eq {value}", "contains[c]": "contains(tolower({field}),tolower({value}))" }
                              fields: { title: Title }
                """), source: "filter.yml", directory: folder)
        let expression = try #require(
            (odata.terminal as? RemoteResponder)?.options.entities["Album"]?.fetch.first?.filters.first)
        #expect(expression.expression == .init(parameter: "$filter", and: " and ", quote: "'", null: "null"))
        #expect(
            Set(expression.lookups) == [
                .init(.equal, "{field} eq {value}"),
                .init(.contains, "contains(tolower({field}),tolower({value}))", caseInsensitive: true),
            ])

        for (filter, message, line) in [
            (
                """
                              parameter: "{field}__{lookup}"
                              lookups: { begins-wth: startswith }
                              fields: [title]
                """, "'begins-wth' is not a comparison a filter grammar can name", 12
            ),
            (
                """
                              parameter: "{field}__{lookup}"
                              lookups: { equal: exact }
                              fields: [titel]
                """, "the filter field 'titel' reads 'titel' of Album", 14
            ),
            (
                // A list of grammars, each for the fields that take its lookups.
                """
                              - parameter: "{field}__{lookup}"
                                lookups: { equal: exact, ends-with: endswith }
                                fields: [title]
                              - parameter: "{field}__{lookup}"
                                lookups: { at-least: gte, less: lt, is-null: isnull }
                                fields: [yeer]
                """, "the filter field 'yeer' reads 'yeer' of Album", 17
            ),
            (
                """
                              expression: $filter
                              lookups: { equal: "{field} eq" }
                              fields: [title]
                """, "the expression pattern '{field} eq' does not say where the field and the value go", 12
            ),
        ] {
            let failure = #expect(throws: ValidationFailure.self) {
                try Pipeline.parse(pipeline(filter), source: "filter.yml", directory: folder)
            }
            let errors = failure?.errors ?? []
            #expect(errors.count == 1 && errors.first?.message.contains(message) == true, "\(errors)")
            #expect(errors.first?.location?.line == line, "\(errors)")
        }
    }
}
