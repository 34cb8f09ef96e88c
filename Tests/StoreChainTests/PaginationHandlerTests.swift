import Foundation
import StoreChainTesting
import Testing

@_spi(Internals) @testable import StoreChain

/// A backend listing of 100 bands that answers one page at a time in one paging style, the
/// way the remote adapter does when a pager asks for a page.
private final class PagedBands: StoreResponder {
    let name = "PagedBands"
    let model: ObjectModel
    let bands: [Node]
    let style: PageInfo.Style
    let size: Int
    let reportsTotal: Bool
    /// Whether pages say where the last page starts, as a `Link: rel="last"` header does.
    let reportsLastPage: Bool
    let filters: Bool
    let sorts: Bool
    private let log = Locked<[PageRequest.Position]>([])

    init(
        style: PageInfo.Style, size: Int = 10, reportsTotal: Bool = true, reportsLastPage: Bool = false,
        filters: Bool = true, sorts: Bool = true
    ) throws {
        model = try MusicFixture.model()
        let countries = ["UK", "IS", "US", "DE"]
        let ordered = (1...100).map { key in
            Node(
                id: ObjectID(entity: "Band", key: .integer(key)),
                attributes: [
                    "id": .integer(key), "name": .string(String(format: "Band %03d", key)),
                    "country": .string(countries[key % countries.count]),
                ])
        }
        // A backend that does not sort lists in its own (here: scrambled) order.
        bands =
            sorts
            ? ordered
            : ordered.sorted {
                ($0.id.key?.description.reversed().description ?? "")
                    < ($1.id.key?.description.reversed().description ?? "")
            }
        self.style = style
        self.size = size
        self.reportsTotal = reportsTotal
        self.reportsLastPage = reportsLastPage
        self.filters = filters
        self.sorts = sorts
    }

    var positions: [PageRequest.Position] { log.withLock { $0 } }

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        guard case .page(let fetch, let page) = request else {
            throw StoreChainError(.invalidRequest, "PagedBands answers page requests only, not \(request)")
        }
        log.withLock { $0.append(page.position) }
        await Task.yield()
        let plan = try FetchPlan(fetch, model: model)
        let size = page.size ?? self.size
        let start: Int
        switch (style, page.position) {
        case (.pageNumber, .record(let record)): start = record / size * size
        case (.offset, .record(let record)): start = record
        case (_, .token(let token)): start = Int(token) ?? 0
        default: start = 0
        }
        let matches = { (node: Node) in plan.predicate?.evaluate(node, in: [ObjectID: Node]()) ?? true }
        let listing = filters ? bands.filter(matches) : bands
        let slice = Array(listing.dropFirst(start).prefix(size))
        let end = start + slice.count
        let next: PageRequest.Position? =
            end < listing.count ? (style.isRandomAccess ? .record(end) : .token(String(end))) : nil
        var info = ResponseInfo(answeredBy: name, origin: .remote)
        info.applied = .init(predicate: filters, sort: sorts, window: false)
        info.page = PageInfo(
            style: style, size: size, start: start, records: slice.count, next: next, listing: info.applied,
            total: reportsTotal ? listing.count : nil,
            lastStart: reportsLastPage ? max(0, listing.count - 1) / size * size : nil)
        return StoreResponse(.fetched(.objects(slice.filter(matches))), info: info)
    }

    /// What a store holding the same bands answers.
    func expected(_ request: FetchRequest) throws -> FetchResult {
        try InMemoryStore(model: model, nodes: bands).fetch(request)
    }
}

extension PagedBands: PagedResponder {
    var defaultPagination: PaginationOptions { PaginationOptions(maxPages: 50, concurrency: 1) }
}

/// One page of bands a terminal says match the predicate (it filtered them in memory, as the
/// remote adapter does), answered without the attribute the predicate reads (a sparse field
/// set): the pager must take them as they are, not evaluate the predicate again.
private struct MatchedPage: StoreResponder {
    let bands = (1...3).map { key in
        Node(id: ObjectID(entity: "Band", key: .integer(key)), attributes: ["name": .string("Band \(key)")])
    }

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        guard case .page = request else {
            throw StoreChainError(.invalidRequest, "MatchedPage answers page requests only, not \(request)")
        }
        var info = ResponseInfo(answeredBy: name, origin: .remote)
        // The backend sorted; the terminal evaluated the predicate itself: matches only.
        info.applied = .init(predicate: true, sort: true, window: false)
        info.page = PageInfo(
            style: .offset, size: 10, start: 0, records: 10, next: nil,
            listing: .init(predicate: false, sort: true, window: false))
        return StoreResponse(.fetched(.objects(bands)), info: info)
    }
}

@Suite struct PaginationHandlerTests {
    private func chain(_ terminal: PagedBands, _ options: PaginationOptions = PaginationOptions()) -> Chain {
        Chain(handlers: [PaginationHandler(model: terminal.model, options: options)], terminal: terminal)
    }

    private func bands(
        offset: Int = 0, limit: Int? = nil, where predicate: String? = nil, sort: String = "name",
        result: FetchRequest.ResultType = .objects
    ) throws -> FetchRequest {
        FetchRequest(
            entity: "Band", predicate: try predicate.map { try FetchPredicate($0) },
            sortDescriptors: [try FetchSortDescriptor(parsing: sort)], fetchLimit: limit, fetchOffset: offset,
            resultType: result)
    }

    /// A page whose terminal evaluated the predicate (its `applied.predicate`, the listing's not) is not filtered
    /// again: once per record, by whoever read it.
    @Test func aPageThatHoldsOnlyMatchesIsNotFilteredAgain() async throws {
        let terminal = MatchedPage()
        let chain = Chain(
            handlers: [PaginationHandler(model: try MusicFixture.model(), options: PaginationOptions())],
            terminal: terminal)
        let result = try await chain.fetch(try bands(where: "country == 'UK'"))
        #expect(result == .objects(terminal.bands))
    }

    /// A chain given no pager, in front of a terminal that reads pages, gets one at the seam: just
    /// below the caches, so the handlers above them see the fetch and those below see each page,
    /// and the terminal is asked for pages only (it walks nothing itself).
    @Test func aChainWithoutAPagerGetsOneAtTheSeamBelowTheCaches() async throws {
        let terminal = try PagedBands(style: .offset)
        let log = SharedLog()
        let chain = Chain(
            handlers: [
                RecordingHandler("above", log: log), MemoryCache(model: terminal.model),
                RecordingHandler("below", log: log),
            ],
            terminal: terminal)
        #expect(chain.handlers.map(\.name) == ["above", "memory-cache", "pagination", "below"])
        let request = try bands(offset: 5, limit: 20, sort: "id")
        #expect(try await chain.fetch(request) == (try terminal.expected(request)))
        #expect(terminal.positions == [.record(5), .record(15)])
        #expect(log.all.filter { $0.contains("↓") } == ["above ↓ fetch", "below ↓ page", "below ↓ page"])
        // It takes the terminal's own limit on pages.
        let pager = try #require(chain.handlers.first { $0 is PaginationHandler } as? PaginationHandler)
        #expect(pager.options == terminal.defaultPagination)
    }

    /// A chain that has a pager keeps it alone, and a terminal that does not read pages gets none.
    @Test func aChainGetsNoSecondPagerAndALocalTerminalNone() throws {
        let terminal = try PagedBands(style: .offset)
        let own = PaginationHandler(model: terminal.model, options: PaginationOptions(pageSize: 7))
        let withOwn = Chain(handlers: [MemoryCache(model: terminal.model), own], terminal: terminal)
        #expect(withOwn.handlers.map(\.name) == ["memory-cache", "pagination"])
        #expect((withOwn.handlers.last as? PaginationHandler)?.options.pageSize == 7)
        let local = Chain(
            handlers: [MemoryCache(model: terminal.model)], terminal: InMemoryStore(model: terminal.model))
        #expect(local.handlers.map(\.name) == ["memory-cache"])
    }

    /// The positions of the pages covering records `offset..<offset+limit` of 100, 10 a page.
    private static func coveringPages(offset: Int, limit: Int) -> [Int] {
        let end = min(100, offset + limit)
        return Array(stride(from: offset / 10 * 10, to: end, by: 10))
    }

    @Test(arguments: [(0, 10), (10, 10), (5, 10), (9, 2), (20, 25), (95, 10), (99, 1), (0, 1)])
    func pageNumbersReadOnlyThePagesCoveringTheWindow(offset: Int, limit: Int) async throws {
        let terminal = try PagedBands(style: .pageNumber)
        let request = try bands(offset: offset, limit: limit)
        let result = try await chain(terminal).fetch(request)
        #expect(result == (try terminal.expected(request)))
        let expected = Self.coveringPages(offset: offset, limit: limit)
        #expect(terminal.positions.count == expected.count)
        #expect(
            Set(terminal.positions.dropFirst()) == Set(expected.dropFirst().map { PageRequest.Position.record($0) }))
    }

    @Test(arguments: [(0, 10), (5, 10), (37, 3), (95, 10)])
    func offsetsStartAtTheWindow(offset: Int, limit: Int) async throws {
        let terminal = try PagedBands(style: .offset)
        let request = try bands(offset: offset, limit: limit)
        #expect(try await chain(terminal).fetch(request) == (try terminal.expected(request)))
        #expect(terminal.positions == [.record(offset)], "one page of 10 holds any window of 10 or fewer")
    }

    @Test func cursorsWalkFromTheStartUntilTheWindowIsCovered() async throws {
        let terminal = try PagedBands(style: .cursor)
        let request = try bands(offset: 25, limit: 10)
        #expect(try await chain(terminal).fetch(request) == (try terminal.expected(request)))
        #expect(terminal.positions == [.record(25), .token("10"), .token("20"), .token("30")])
    }

    @Test func aResidualFilterWalksPagesInOrderAndStopsAsSoonAsTheWindowIsFull() async throws {
        // Every fourth band is from the UK; the backend does not filter, so pages are read
        // until 5 + 10 matches are in: bands 4, 8, …, 60 → the first 6 pages.
        let terminal = try PagedBands(style: .pageNumber, filters: false)
        let request = try bands(offset: 5, limit: 10, where: "country == 'UK'")
        #expect(try await chain(terminal).fetch(request) == (try terminal.expected(request)))
        #expect(terminal.positions == [.record(5)] + [10, 20, 30, 40, 50].map { .record($0) })
    }

    @Test func anUnsortedBackendHasEveryPageReadAndTheSortDoneHere() async throws {
        let terminal = try PagedBands(style: .pageNumber, sorts: false)
        let request = try bands(offset: 3, limit: 5, sort: "-name")
        #expect(try await chain(terminal).fetch(request) == (try terminal.expected(request)))
        #expect(terminal.positions.count == 10, "every page, and no page twice: \(terminal.positions)")
        #expect(Set(terminal.positions).count == 10)
    }

    @Test func withoutALimitEveryPageIsReadOnceAndNoMore() async throws {
        let terminal = try PagedBands(style: .pageNumber)
        let request = try bands()
        #expect(try await chain(terminal, .init(concurrency: 4)).fetch(request) == (try terminal.expected(request)))
        #expect(Set(terminal.positions) == Set(stride(from: 0, to: 100, by: 10).map { .record($0) }))
        #expect(terminal.positions.count == 10)
    }

    @Test func withoutATotalWavesStopAtTheFirstShortPage() async throws {
        let terminal = try PagedBands(style: .pageNumber, reportsTotal: false)
        let request = try bands()
        #expect(try await chain(terminal, .init(concurrency: 3)).fetch(request) == (try terminal.expected(request)))
        // Waves of 3 after the first page: 10-30, 40-60, 70-90; page 90 is the last.
        #expect(terminal.positions.count == 10)
    }

    @Test func tooManyPagesFailsClearlyInsteadOfReadingOn() async throws {
        let terminal = try PagedBands(style: .cursor)
        let error = await #expect(throws: StoreChainError.self) {
            _ = try await chain(terminal, .init(maxPages: 3)).fetch(try bands())
        }
        #expect(error?.code == .tooManyPages)
        #expect(error?.description.contains("more than 3 pages") == true)
        #expect(terminal.positions.count == 3)
        // A window within the budget is fine.
        let window = try bands(limit: 20)
        #expect(try await chain(terminal, .init(maxPages: 3)).fetch(window) == (try terminal.expected(window)))
    }

    @Test func aParallelWaveNeverReadsPastMaxPages() async throws {
        let terminal = try PagedBands(style: .pageNumber)
        let error = await #expect(throws: StoreChainError.self) {
            _ = try await chain(terminal, .init(maxPages: 3, concurrency: 4)).fetch(try bands())
        }
        #expect(error?.code == .tooManyPages)
        #expect(terminal.positions.count == 3, "the wave was cut to the pages left: \(terminal.positions)")
    }

    @Test func aCountComesFromTheBackendsTotalWhenItFiltersItself() async throws {
        let terminal = try PagedBands(style: .pageNumber)
        let request = try bands(offset: 10, limit: 200, where: "country == 'UK'", result: .count)
        #expect(try await chain(terminal).fetch(request) == .count(15))
        #expect(terminal.positions.count == 1)
    }

    @Test(arguments: [("country == 'UK'", 25), ("country == 'UK' AND id < 30", 7), ("id == 1", 1), ("id < 0", 0)])
    func aCountComesFromTheLastPageWhenOnlyThatIsKnown(predicate: String, expected: Int) async throws {
        let terminal = try PagedBands(style: .pageNumber, reportsTotal: false, reportsLastPage: true)
        #expect(try await chain(terminal).fetch(try bands(where: predicate, result: .count)) == .count(expected))
        #expect(
            terminal.positions.count == (expected > 10 ? 2 : 1), "the first page and the last: \(terminal.positions)")
    }

    @Test func progressCountsPagesAndRecordsAfterEveryPage() async throws {
        let terminal = try PagedBands(style: .link)
        let seen = Locked<[FetchProgress]>([])
        let chain = chain(terminal)
        var context = chain.makeContext()
        context[FetchProgressKey.self] = { progress in seen.withLock { $0.append(progress) } }
        _ = try await chain.send(.fetch(try bands(limit: 35)), context: context)
        let reports = seen.withLock { $0 }
        #expect(reports.map(\.pages) == [1, 2, 3, 4])
        #expect(reports.map(\.records) == [10, 20, 30, 40])
        #expect(reports.allSatisfy { $0.totalRecords == 100 && $0.entity == "Band" })
    }

    @Test func pageSizeIsPerEntityAndOtherRequestsPassUnchanged() async throws {
        let terminal = try PagedBands(style: .pageNumber)
        let options = PaginationOptions(pageSize: 50, pageSizes: ["Band": 25])
        let request = try bands(offset: 30, limit: 40)
        #expect(try await chain(terminal, options).fetch(request) == (try terminal.expected(request)))
        #expect(terminal.positions == [.record(30), .record(50)], "records 30-69 in pages of 25 (25-49, 50-74)")
        let store = try MusicFixture.store()
        let plain = Chain(handlers: [PaginationHandler(model: store.model)], terminal: store)
        let fault = ObjectID(entity: "Band", key: .integer(1))
        #expect(try await plain.send(.objectFault(fault)).objectNode() == store.node(for: fault))
        let all = try bands(offset: 1, limit: 2)
        #expect(try await plain.fetch(all) == (try store.fetch(all)), "a terminal that does not page answers whole")
    }
}
