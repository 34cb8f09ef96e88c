import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

/// Paging facts written in pipeline files beside the paging style's options, and on a
/// relationship's own endpoint; mistakes located at their lines.
@Suite struct PagingFactsFileTests {
    static func folder() throws -> URL {
        let folder = TemporaryFolder.make("storechain-paging-facts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        return folder
    }

    /// A pipeline whose Band mapping is `band`, written at any indentation.
    static func pipeline(band: String, album: String = "fetch: [GET /albums/]") -> String {
        let lines = band.split(separator: "\n", omittingEmptySubsequences: false)
        let indent = lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        let band = lines.map { "        " + $0.dropFirst(indent) }.joined(separator: "\n")
        return """
            model: music.model.yml
            terminal:
              remote:
                base-url: https://api.example/api
                entities:
                  Band:
            \(band)
                  Album:
                    records: results
                    \(album)
                  Track: { records: results, fetch: [GET /tracks/] }

            """
    }

    static func remote(_ text: String) throws -> RemoteOptions {
        let pipeline = try Pipeline.parse(text, source: "facts.yml", directory: try Self.folder())
        return try #require(pipeline.terminal as? RemoteResponder).options
    }

    /// `omits-nulls` on an entity (a backend that leaves out null fields) is read; off by default.
    @Test func omitsNullsIsReadFromTheEntitysMapping() throws {
        let options = try Self.remote(Self.pipeline(band: "records: results\nomits-nulls: true\nfetch: [GET /bands/]"))
        #expect(options.entities["Band"]?.omitsNulls == true)
        #expect(options.entities["Album"]?.omitsNulls == false)
    }

    @Test func factsAreReadBesideEachPagingStyleAndOnARelationshipsEndpoint() throws {
        let options = try Self.remote(
            Self.pipeline(
                band: """
                                records: results
                                fetch:
                                  - request: GET /bands/?page={page}
                                    paging: { pages: { page: page, size: 50, next: next, total: count } }
                                  - request: GET /bands/?offset={offset}&limit={limit}
                                    paging: { offset: { size: 100, has-more: { header: X-More }, total: { header: Content-Range } } }
                                  - request: GET /bands/?_next={cursor}
                                    paging: { cursor: { variable: cursor, next: next, total: filtered_table_rows_count } }
                                  - request: GET /bands/?limit={limit}&starting_after={after}
                                    paging: { cursor: { variable: after, next: { last-record: id }, limit: limit, has-more: has_more } }
                                relationships:
                                  albums:
                                    endpoint:
                                      request: GET /bands/{id}/albums/
                                      paging: { link: { next: links.next, has-more: meta.has_more } }
                    """))
        let band = try #require(options.entities["Band"])
        #expect(
            band.fetch.map(\.pagingFacts) == [
                PagingFacts(next: .body("next"), total: .body("count")),
                PagingFacts(hasMore: .header("X-More"), total: .header("Content-Range")),
                // A cursor's `next` is the cursor, not a link.
                PagingFacts(total: .body("filtered_table_rows_count")),
                PagingFacts(hasMore: .body("has_more")),
            ])
        #expect(band.fetch.map(\.paging?.cursorPlace) == [nil, nil, .body("next"), .lastRecord("id")])
        #expect(
            band.relationships["albums"]
                == .endpoint(
                    "GET /bands/{id}/albums/",
                    paging: PagingFacts(next: .body("links.next"), hasMore: .body("meta.has_more"))))
        // Without facts: the Link and X-Total-Count headers.
        #expect(options.entities["Album"]?.fetch.first?.pagingFacts == PagingFacts())
    }

    static func errors(_ band: String) -> [StoreChainError] {
        let failure = #expect(throws: ValidationFailure.self) {
            try Pipeline.parse(Self.pipeline(band: band), source: "facts.yml", directory: try Self.folder())
        }
        return failure?.errors ?? []
    }

    @Test func aMisspeltFactIsLocatedWithTheNameMeant() throws {
        let errors = Self.errors(
            """
                records: results
                fetch:
                  - request: GET /bands/?page={page}
                    paging: { pages: { page: page, nxt: next } }
            """)
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.message == "unknown option 'nxt'", "\(errors)")
        #expect(errors.first?.location?.line == 10, "\(errors)")
        #expect(errors.first?.suggestion?.contains("did you mean 'next'") == true, "\(errors)")
    }

    @Test func aMisspeltRequiredOptionIsNamedWithTheOneMissing() throws {
        let errors = Self.errors(
            """
                records: results
                fetch:
                  - request: GET /bands/?_next={cursor}
                    paging: { cursor: { variable: cursor, nxt: next } }
            """)
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.message == "the required option 'next' is missing; 'nxt' is here instead", "\(errors)")
        #expect(errors.first?.suggestion?.contains("did you mean 'next'?") == true, "\(errors)")
        #expect(errors.first?.location?.line == 10, "\(errors)")
    }

    @Test func aRelationshipEndpointTakesAnyPagingStyleAndItsVariablesAreChecked() throws {
        let pipeline = Self.pipeline(
            band: """
                    records: results
                    fetch: [GET /bands/]
                    relationships:
                      albums:
                        endpoint: { request: "GET /bands/{id}/albums/?page={page}", paging: { pages: { page: page, size: 20, total: count } } }
                """)
        let options = try Self.remote(pipeline)
        #expect(
            options.entities["Band"]?.relationships["albums"]
                == .endpoint(
                    "GET /bands/{id}/albums/?page={page}", paging: PagingFacts(total: .body("count")),
                    style: .pages(page: "page", perPage: "per_page", size: 20, first: 1)))

        let errors = Self.errors(
            """
                records: results
                fetch: [GET /bands/]
                relationships:
                  albums:
                    endpoint: { request: "GET /bands/{id}/albums/?p={pg}", paging: { pages: { page: page } } }
            """)
        #expect(errors.count == 1, "\(errors)")
        #expect(
            errors.first?.message == "the paging variable {page} is not in 'GET /bands/{id}/albums/?p={pg}'",
            "\(errors)")
        #expect(errors.first?.location?.line == 11, "\(errors)")
    }
}

extension Paging {
    /// Where a cursor-paged endpoint's next cursor is; `nil` for other styles.
    fileprivate var cursorPlace: CursorPlace? {
        if case .cursor(_, let next, _, _) = self { next } else { nil }
    }
}
