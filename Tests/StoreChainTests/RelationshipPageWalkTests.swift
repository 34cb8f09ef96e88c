import Foundation
import StoreChainTesting
import Testing

@_spi(Internals) @testable import StoreChain

/// A relationship fault through a pager: read one `relationshipPage` at a time below it, in the
/// loop a fetch's pages are read in, never cut short.
@Suite struct RelationshipPageWalkTests {
    /// A terminal holding 25 albums of Band/1 that answers its `albums` list ten at a time, in
    /// the backend's order (by descending key), by page number or by cursor.
    private static func albumsOfBand(style: PageInfo.Style) -> RecordingResponder {
        let keys = Array((1...25).reversed())
        return RecordingResponder { request, _ in
            guard case .relationshipPage(let owner, "albums", let page) = request, owner.key == .integer(1) else {
                throw StoreChainError(.invalidRequest, "only pages of Band/1.albums, not \(request)")
            }
            let start: Int =
                switch page.position {
                case .record(let record): record / 10 * 10
                case .token(let token): Int(token) ?? 0
                }
            let slice = Array(keys.dropFirst(start).prefix(10))
            let end = start + slice.count
            let next: PageRequest.Position? =
                end < keys.count ? (style.isRandomAccess ? .record(end) : .token(String(end))) : nil
            var info = ResponseInfo(answeredBy: "albums", origin: .remote)
            info.page = PageInfo(
                style: style, size: 10, start: start, records: slice.count, next: next, listing: .all)
            info.exchanges = 1
            let ids = slice.map { ObjectID(entity: "Album", key: .integer($0)) }
            return StoreResponse(
                .relationship(.toMany(ids)),
                related: slice.map { TestData.node("Album", $0, ["title": .string("Album \($0)")]) }, info: info)
        }
    }

    private static let fault = StoreRequest.relationshipFault(
        ObjectID(entity: "Band", key: .integer(1)), relationship: "albums")

    @Test(arguments: [PageInfo.Style.pageNumber, .cursor])
    func aRelationshipFaultIsReadPageByPageBelowThePagerInTheBackendsOrder(style: PageInfo.Style) async throws {
        let terminal = Self.albumsOfBand(style: style)
        let log = SharedLog()
        let chain = Chain(
            handlers: [
                RecordingHandler("above", log: log), PaginationHandler(model: try MusicFixture.model()),
                RecordingHandler("below", log: log),
            ], terminal: terminal, clock: ManualClock(), tracing: nil)
        let response = try await chain.send(Self.fault)
        #expect(
            try response.relationshipValue().objectIDs
                == (1...25).reversed().map { ObjectID(entity: "Album", key: .integer($0)) })
        #expect(Set(response.related.map(\.id)).count == 25, "every album's record comes with the list")
        #expect(response.info.pagesRead == 3)
        #expect(response.info.exchanges == 3)
        #expect(response.info.page == nil, "the answer is the whole list, not a page of it")
        // The terminal sees only pages; the handlers above the pager see the one fault.
        #expect(terminal.requests.map(\.kind) == [.relationshipPage, .relationshipPage, .relationshipPage])
        #expect(log.all.filter { $0.hasPrefix("above ↓") } == ["above ↓ relationship-fault"])
        #expect(log.all.filter { $0.hasPrefix("below ↓") }.count == 3)
    }

    @Test func aListLongerThanMaxPagesFailsInsteadOfBeingCutShort() async throws {
        let terminal = Self.albumsOfBand(style: .cursor)
        let chain = Chain(
            handlers: [PaginationHandler(model: try MusicFixture.model(), options: PaginationOptions(maxPages: 2))],
            terminal: terminal, clock: ManualClock(), tracing: nil)
        let error = await #expect(throws: StoreChainError.self) { try await chain.send(Self.fault) }
        #expect(error?.code == .tooManyPages)
        #expect(
            error?.message.contains("reading Band/1.albums needs more than 2 pages") == true,
            "\(String(describing: error))")
        #expect(terminal.count(.relationshipPage) == 2)
    }

    @Test func aTerminalThatDoesNotPageAnswersTheWholeListAtOnce() async throws {
        let store = try MusicFixture.store()
        let terminal = RecordingResponder(forwardingTo: store)
        let chain = Chain(
            handlers: [PaginationHandler(model: try MusicFixture.model())], terminal: terminal, clock: ManualClock(),
            tracing: nil)
        let response = try await chain.send(Self.fault)
        let direct = try await store.respond(to: Self.fault, context: RequestContext())
        #expect(try response.relationshipValue() == direct.relationshipValue())
        #expect(try !response.relationshipValue().objectIDs.isEmpty)
        #expect(terminal.requests.map(\.kind) == [.relationshipPage])
    }
}
