import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Cursor paging where the cursor is the page's last record's key (Stripe's `starting_after`,
/// keyset paging): `paging: { cursor: { variable: starting_after, next: { last-record: id },
/// limit: limit, has-more: has_more } }`. Against a stubbed Stripe-style backend of bands 1…75
/// whose `has_more` says whether records follow, and which sends at most 30 a page.
@Suite struct LastRecordCursorTests {
    /// Bands 1…`count` after `starting_after` (none: from the first), `limit` a page (at most
    /// 30); `has_more` in the body unless `flag` is false; keys as strings with `textKeys`.
    static func backend(count: Int = 75, flag: Bool = true, textKeys: Bool = false) -> StubTransport {
        StubTransport { request in
            let after = BodyPagingTests.query(request, "starting_after") ?? 0
            let limit = min(BodyPagingTests.query(request, "limit") ?? 10, 30)
            let keys = after < count ? Array((after + 1)...min(count, after + limit)) : []
            let data = keys.map { key in
                #"{"id": \#(textKeys ? "\"\(key)\"" : "\(key)"), "object": "band", "name": "Band \#(key)"}"#
            }
            let more = flag ? #", "has_more": \#(after + limit < count)"# : ""
            return .json(#"{"object": "list", "url": "/v1/bands", "data": [\#(data.joined(separator: ", "))]\#(more)}"#)
        }
    }

    static func endpoint(limit: String? = "limit", flag: Bool = true) -> RemoteEndpoint {
        var endpoint = RemoteEndpoint(
            limit == nil
                ? "GET /bands?starting_after={starting_after}"
                : "GET /bands?limit={limit}&starting_after={starting_after}",
            paging: .cursor(variable: "starting_after", next: .lastRecord("id"), limit: limit, size: 30),
            keyOrdered: true)
        if flag { endpoint.pagingFacts = PagingFacts(hasMore: .body("has_more")) }
        return endpoint
    }

    static func queries(_ transport: StubTransport) -> [String] {
        transport.requests.map { $0.url.query ?? "" }
    }

    @Test(arguments: [false, true])
    func eachPageStartsAfterTheLastRecordOfThePageBefore(behindAPager: Bool) async throws {
        let transport = Self.backend(textKeys: true)
        let handlers: [any StoreHandler] = behindAPager ? [PaginationHandler(model: try BodyPagingTests.model())] : []
        let chain = Chain(
            handlers: handlers,
            terminal: try BodyPagingTests.remote(Self.endpoint(), transport: transport, records: "data"))
        #expect(BodyPagingTests.keys(try await chain.fetch(try BodyPagingTests.all())) == Array(1...75))
        // The flag says the third page is the last: no empty page is asked for.
        #expect(
            Self.queries(transport) == [
                "limit=30", "limit=30&starting_after=30", "limit=30&starting_after=60",
            ])
    }

    @Test func aWindowOfAKeyOrderedListingReadsOnlyThePagesItNeeds() async throws {
        let transport = Self.backend()
        let chain = Chain(
            handlers: [PaginationHandler(model: try BodyPagingTests.model())],
            terminal: try BodyPagingTests.remote(Self.endpoint(), transport: transport, records: "data"))
        #expect(
            BodyPagingTests.keys(try await chain.fetch(try BodyPagingTests.all(limit: 5, offset: 32))) == Array(33...37)
        )
        #expect(transport.requests.count == 2)
    }

    @Test func withoutAFlagAShortPageIsTheLastAndWithoutALimitAnEmptyOneIs() async throws {
        let limited = Self.backend(flag: false)
        let chain = Chain(
            handlers: [],
            terminal: try BodyPagingTests.remote(Self.endpoint(flag: false), transport: limited, records: "data"))
        #expect(BodyPagingTests.keys(try await chain.fetch(try BodyPagingTests.all())) == Array(1...75))
        #expect(limited.requests.count == 3)

        // No page size is asked for, so a page of any size may have a successor: read until one
        // is empty (10 a page by the backend's default).
        let unlimited = Self.backend(flag: false)
        let unsized = Chain(
            handlers: [],
            terminal: try BodyPagingTests.remote(
                Self.endpoint(limit: nil, flag: false), transport: unlimited, records: "data"))
        #expect(BodyPagingTests.keys(try await unsized.fetch(try BodyPagingTests.all())) == Array(1...75))
        #expect(unlimited.requests.count == 9)
    }

    @Test func aLastRecordWithoutAUsableKeyIsALocatedError() async throws {
        let transport = StubTransport { _ in
            .json(#"{"object": "list", "data": [{"id": 1, "name": "A", "ref": {"n": 1}}], "has_more": true}"#)
        }
        var endpoint = Self.endpoint()
        endpoint.paging = .cursor(variable: "starting_after", next: .lastRecord("ref"), limit: "limit", size: 30)
        let chain = Chain(
            handlers: [], terminal: try BodyPagingTests.remote(endpoint, transport: transport, records: "data"))
        let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(try BodyPagingTests.all()) }
        #expect(error?.code == .badRecord)
        #expect(
            error?.message == "the next-page cursor is object, not a string or an integer",
            "\(String(describing: error))")
        #expect(error?.location?.path == "$.data[0].ref", "\(String(describing: error))")
    }

    /// A backend that sends fewer records than the limit asked (Stripe caps `limit` at 100; this
    /// one at 30) to an endpoint that declares no `has-more`: its first page is short, and was
    /// taken for the last, answering 30 bands of 75. Its body says `has_more: true`, so the
    /// guessed end is now a located error naming that path; declared, the flag reads on.
    @Test(arguments: [false, true])
    func aShortPageWhoseBodySaysThereIsMoreIsNeverTakenForTheLast(behindAPager: Bool) async throws {
        var endpoint = Self.endpoint(flag: false)
        endpoint.paging = .cursor(variable: "starting_after", next: .lastRecord("id"), limit: "limit", size: 100)
        let handlers: [any StoreHandler] = behindAPager ? [PaginationHandler(model: try BodyPagingTests.model())] : []
        let chain = Chain(
            handlers: handlers,
            terminal: try BodyPagingTests.remote(endpoint, transport: Self.backend(), records: "data"))
        let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(try BodyPagingTests.all()) }
        #expect(error?.code == .incompleteData, "\(String(describing: error))")
        #expect(error?.location?.path == "$.has_more", "\(String(describing: error))")

        endpoint.pagingFacts = PagingFacts(hasMore: .body("has_more"))
        let declared = Chain(
            handlers: handlers,
            terminal: try BodyPagingTests.remote(endpoint, transport: Self.backend(), records: "data"))
        #expect(BodyPagingTests.keys(try await declared.fetch(try BodyPagingTests.all())) == Array(1...75))
    }

    /// A stated total says where a listing read after its last records ends.
    @Test func aStatedTotalEndsTheListing() async throws {
        let transport = StubTransport { request in
            let after = BodyPagingTests.query(request, "starting_after") ?? 0
            let keys = after < 45 ? Array((after + 1)...min(45, after + 20)) : []
            let data = keys.map { #"{"id": \#($0), "name": "Band \#($0)"}"# }
            return .json(#"{"total": 45, "data": [\#(data.joined(separator: ", "))]}"#)
        }
        var endpoint = Self.endpoint(flag: false)
        endpoint.paging = .cursor(variable: "starting_after", next: .lastRecord("id"), limit: "limit", size: 100)
        endpoint.pagingFacts = PagingFacts(total: .body("total"))
        let chain = Chain(
            handlers: [], terminal: try BodyPagingTests.remote(endpoint, transport: transport, records: "data"))
        #expect(BodyPagingTests.keys(try await chain.fetch(try BodyPagingTests.all())) == Array(1...45))
        #expect(Self.queries(transport) == ["limit=100", "limit=100&starting_after=20", "limit=100&starting_after=40"])
    }
}
