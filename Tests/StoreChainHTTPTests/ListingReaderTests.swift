import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainHTTP

/// The listing loop on its own: a plan's pages read in each paging style until the listing
/// ends, the first exchange alone conditional, and a listing never cut short or led off the
/// backend's host.
@Suite struct ListingReaderTests {
    private static func reader(_ style: PageInfo.Style) throws -> (ListingReader, QueryPlanner.Plan, StubTransport) {
        let (remote, transport) = try RemotePagingTests.remote(style)
        let plan = try remote.planners.planner(for: "Band").plan(predicate: nil, sort: [])
        return (remote.listings, plan, transport)
    }

    private static let band = Result { try RemotePagingTests.model().requireEntity("Band") }

    @Test(arguments: [PageInfo.Style.pageNumber, .offset, .cursor, .link])
    func everyPageIsReadUntilTheListingEnds(_ style: PageInfo.Style) async throws {
        let (reader, plan, transport) = try Self.reader(style)
        let listing = try await reader.read(plan, entity: try Self.band.get(), context: RequestContext())
        #expect(listing.nodes.map(\.id.key) == (1...RemotePagingTests.count).map { .integer($0) })
        #expect(listing.pages == 6 && transport.requests.count == 6, "57 records, 10 a page")
        #expect(listing.document == nil, "a listing of several documents is not one document")
        let second = try #require(transport.requests.dropFirst().first).url.absoluteString
        let expectedSecond =
            switch style {
            case .pageNumber: "page=2"
            case .offset: "offset=10"
            case .cursor: "cursor=10"
            case .link: "after=10"
            }
        #expect(second.contains(expectedSecond), "\(second)")
    }

    @Test func onlyTheFirstExchangeIsConditionalAndNotModifiedEndsTheRead() async throws {
        let (reader, plan, transport) = try Self.reader(.pageNumber)
        let validators = Validators(etag: "\"v1\"")
        let read = try await reader.read(
            plan, entity: try Self.band.get(), ifChangedSince: validators, context: RequestContext())
        #expect(transport.requests.first?.headers["If-None-Match"] == "\"v1\"")
        #expect(transport.requests.dropFirst().allSatisfy { $0.headers["If-None-Match"] == nil })
        #expect(read.pages == 6 && !read.notModified)

        let unchanged = StubTransport { _ in TransportResponse(status: 304) }
        let (remote, _) = try RemotePagingTests.remote(.pageNumber)
        let notModified = ListingReader(
            exchange: RemoteExchange(
                options: remote.options, transport: unchanged, interceptors: [], authorization: nil),
            mapper: remote.mapper, options: remote.options, name: "remote")
        let answer = try await notModified.read(
            plan, entity: try Self.band.get(), ifChangedSince: validators, context: RequestContext())
        #expect(answer.notModified && answer.pages == 1 && answer.nodes.isEmpty)
        #expect(unchanged.requests.count == 1)
    }

    @Test func aListingLongerThanMaxPagesThrowsInsteadOfEndingShort() async throws {
        let (remote, transport) = try RemotePagingTests.remote(.offset)
        var options = remote.options
        options.maxPages = 3
        let reader = ListingReader(
            exchange: RemoteExchange(options: options, transport: transport, interceptors: [], authorization: nil),
            mapper: remote.mapper, options: options, name: "remote")
        let plan = try remote.planners.planner(for: "Band").plan(predicate: nil, sort: [])
        let error = await #expect(throws: StoreChainError.self) {
            try await reader.read(plan, entity: try Self.band.get(), context: RequestContext())
        }
        #expect(error?.code == .tooManyPages)
        #expect(error?.message.contains("more than 3 pages") == true, "\(String(describing: error))")
        #expect(transport.requests.count == 3)
    }

    @Test func aNextLinkToAnotherHostIsRefusedBeforeItIsFollowed() async throws {
        let transport = StubTransport { _ in
            .json(
                #"{"data": [{"id": 1, "name": "A"}]}"#,
                headers: ["Link": #"<https://elsewhere.example/bands?after=1>; rel="next""#])
        }
        let (remote, _) = try RemotePagingTests.remote(.link)
        let reader = ListingReader(
            exchange: RemoteExchange(
                options: remote.options, transport: transport, interceptors: [], authorization: "Bearer secret"),
            mapper: remote.mapper, options: remote.options, name: "remote")
        let plan = try remote.planners.planner(for: "Band").plan(predicate: nil, sort: [])
        let error = await #expect(throws: StoreChainError.self) {
            try await reader.read(plan, entity: try Self.band.get(), context: RequestContext())
        }
        #expect(error?.code == .badRecord)
        #expect(error?.message.contains("leads off the backend") == true, "\(String(describing: error))")
        #expect(transport.requests.map(\.url.host) == ["api.example"], "the token went nowhere else")
    }

    @Test func theFirstDocumentOfAnUnpagedEndpointSaysItAnnouncesANextPage() async throws {
        let transport = StubTransport { _ in
            .json(#"{"data": [{"id": 1, "name": "A"}]}"#, headers: ["Link": #"</v2/bands?after=1>; rel="next""#])
        }
        let (remote, _) = try RemotePagingTests.remote(.link)
        var options = remote.options
        options.entities["Band"]?.fetch = [RemoteEndpoint("GET /bands")]
        let unpaged = try RemoteResponder(
            model: try RemotePagingTests.model(), options: options, transport: transport, environment: [:])
        let plan = try unpaged.planners.planner(for: "Band").plan(predicate: nil, sort: [])
        let first = try await unpaged.listings.read(
            plan, entity: try Self.band.get(), firstDocumentOnly: true, context: RequestContext())
        #expect(first.announcesNextPage && first.pages == 1 && first.nodes.count == 1)
        #expect(first.document != nil, "the document is kept to answer as a first page")
    }

    @Test func badRecordsAreSkippedAndCountedWhenTheOptionsSaySo() async throws {
        let transport = StubTransport { _ in
            .json(#"{"data": [{"id": 1, "name": "A"}, {"id": "not a number", "name": "B"}, {"id": 3, "name": "C"}]}"#)
        }
        let (remote, _) = try RemotePagingTests.remote(.link)
        var options = remote.options
        options.badRecords = .skip
        options.entities["Band"]?.fetch = [RemoteEndpoint("GET /bands")]
        let skipping = try RemoteResponder(
            model: try RemotePagingTests.model(), options: options, transport: transport, environment: [:])
        let plan = try skipping.planners.planner(for: "Band").plan(predicate: nil, sort: [])
        let listing = try await skipping.listings.read(plan, entity: try Self.band.get(), context: RequestContext())
        #expect(listing.nodes.map(\.id.key) == [.integer(1), .integer(3)])
        #expect(listing.skipped == 1)

        options.badRecords = .fail
        let failing = try RemoteResponder(
            model: try RemotePagingTests.model(), options: options, transport: transport, environment: [:])
        let error = await #expect(throws: StoreChainError.self) {
            try await failing.listings.read(plan, entity: try Self.band.get(), context: RequestContext())
        }
        #expect(error?.code == .badRecord)
        #expect(error?.location?.path?.contains("$.data[1]") == true, "\(String(describing: error))")
    }
}
