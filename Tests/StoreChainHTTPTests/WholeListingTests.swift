import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainHTTP

/// A whole listing, asked of the remote terminal on its own: read one page request at a time by
/// the pager of the chain it goes through, in each paging style, until the listing ends; the first
/// exchange alone conditional, and a listing never cut short or led off the backend's host.
@Suite struct WholeListingTests {
    private static let bands = StoreRequest.fetch(FetchRequest(entity: "Band"))

    @Test(arguments: [PageInfo.Style.pageNumber, .offset, .cursor, .link])
    func everyPageIsReadUntilTheListingEnds(_ style: PageInfo.Style) async throws {
        let (remote, transport) = try RemotePagingTests.remote(style)
        let response = try await remote.respondInAChain(to: Self.bands, context: RequestContext())
        guard case .objects(let nodes) = try response.fetchResult() else {
            Issue.record("a fetch of objects answered \(response.result)")
            return
        }
        #expect(nodes.map(\.id.key) == (1...RemotePagingTests.count).map { .integer($0) })
        #expect(response.info.pagesRead == 6 && transport.requests.count == 6, "57 records, 10 a page")
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
        let (remote, transport) = try RemotePagingTests.remote(.pageNumber)
        let validators = Validators(etag: "\"v1\"")
        let revalidation = StoreRequest.revalidation(Self.bands, validators)
        let read = try await remote.respondInAChain(to: revalidation, context: RequestContext())
        #expect(transport.requests.first?.headers["If-None-Match"] == "\"v1\"")
        #expect(transport.requests.dropFirst().allSatisfy { $0.headers["If-None-Match"] == nil })
        #expect(read.info.pagesRead == 6 && !read.info.notModified)

        let unchanged = StubTransport { _ in TransportResponse(status: 304) }
        let notModified = try RemoteResponder(
            model: remote.model, options: remote.options, transport: unchanged, environment: [:])
        let answer = try await notModified.respondInAChain(to: revalidation, context: RequestContext())
        #expect(answer.info.notModified && answer.info.pagesRead == 1)
        #expect(try answer.fetchResult() == .objects([]))
        #expect(unchanged.requests.count == 1)
    }

    @Test func aListingLongerThanMaxPagesThrowsInsteadOfEndingShort() async throws {
        let (remote, transport) = try RemotePagingTests.remote(.offset)
        var options = remote.options
        options.maxPages = 3
        let limited = try RemoteResponder(model: remote.model, options: options, transport: transport, environment: [:])
        let error = await #expect(throws: StoreChainError.self) {
            try await limited.respondInAChain(to: Self.bands, context: RequestContext())
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
        var options = remote.options
        options.headers["Authorization"] = "Bearer secret"
        let linked = try RemoteResponder(model: remote.model, options: options, transport: transport, environment: [:])
        let error = await #expect(throws: StoreChainError.self) {
            try await linked.respondInAChain(to: Self.bands, context: RequestContext())
        }
        #expect(error?.code == .badRecord)
        #expect(error?.message.contains("leads off the backend") == true, "\(String(describing: error))")
        #expect(transport.requests.map(\.url.host) == ["api.example"], "the token went nowhere else")
    }

    @Test func anUnpagedEndpointWhoseDocumentAnnouncesANextPageIsReadAsALinkListing() async throws {
        let transport = StubTransport { request in
            request.url.query?.contains("after=1") == true
                ? .json(#"{"data": [{"id": 2, "name": "B"}]}"#)
                : .json(#"{"data": [{"id": 1, "name": "A"}]}"#, headers: ["Link": #"</v2/bands?after=1>; rel="next""#])
        }
        let (remote, _) = try RemotePagingTests.remote(.link)
        var options = remote.options
        options.entities["Band"]?.fetch = [RemoteEndpoint("GET /bands")]
        let unpaged = try RemoteResponder(model: remote.model, options: options, transport: transport, environment: [:])
        let response = try await unpaged.respondInAChain(to: Self.bands, context: RequestContext())
        guard case .objects(let nodes) = try response.fetchResult() else {
            Issue.record("a fetch of objects answered \(response.result)")
            return
        }
        #expect(nodes.map(\.id.key) == [.integer(1), .integer(2)])
        #expect(transport.requests.count == 2)
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
            model: remote.model, options: options, transport: transport, environment: [:])
        let listing = try await skipping.respondInAChain(to: Self.bands, context: RequestContext())
        guard case .objects(let nodes) = try listing.fetchResult() else {
            Issue.record("a fetch of objects answered \(listing.result)")
            return
        }
        #expect(nodes.map(\.id.key) == [.integer(1), .integer(3)])
        #expect(listing.info.skippedRecords == 1)

        options.badRecords = .fail
        let failing = try RemoteResponder(model: remote.model, options: options, transport: transport, environment: [:])
        let error = await #expect(throws: StoreChainError.self) {
            try await failing.respondInAChain(to: Self.bands, context: RequestContext())
        }
        #expect(error?.code == .badRecord)
        #expect(error?.location?.path?.contains("$.data[1]") == true, "\(String(describing: error))")
    }
}
