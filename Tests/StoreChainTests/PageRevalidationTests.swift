import Foundation
import StoreChainTesting
import Testing

@testable import StoreChain

/// A listing of bands, 10 a page by page number, whose every page has an ETag made from its
/// records and answers "not modified" to a request carrying it; its bands can change.
private final class VersionedBands: StoreResponder {
    let name = "VersionedBands"
    let model: ObjectModel
    private let state = Locked<(bands: [Node], log: [String])>(([], []))

    init(count: Int) throws {
        model = try MusicFixture.model()
        state.withLock { $0.bands = (1...count).map(Self.band) }
    }

    static func band(_ key: Int) -> Node {
        Node(
            id: ObjectID(entity: "Band", key: .integer(key)),
            attributes: ["id": .integer(key), "name": .string(String(format: "Band %03d", key))])
    }

    /// What each page request got: `200 @10`, `304 @10`, with `if-changed` when it was conditional.
    var log: [String] { state.withLock { $0.log } }
    var bands: [Node] { state.withLock { $0.bands } }

    func change(_ body: @Sendable (inout [Node]) -> Void) {
        state.withLock { body(&$0.bands) }
    }

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        guard case .page(_, let page) = request, case .record(let record) = page.position else {
            throw StoreChainError(.invalidRequest, "VersionedBands answers page requests by record only")
        }
        let size = page.size ?? 10
        let start = record / size * size
        return state.withLock { state in
            let slice = Array(state.bands.dropFirst(start).prefix(size))
            let etag = "\"" + slice.map { "\($0.attributes["name"] ?? .null)" }.joined(separator: ",") + "\""
            let conditional = page.validators == nil ? "" : " if-changed"
            if page.validators?.etag == etag {
                state.log.append("304 @\(start)\(conditional)")
                return StoreResponse(.fetched(.objects([])), info: .remote(name, etag: etag, notModified: true))
            }
            state.log.append("200 @\(start)\(conditional)")
            let end = start + slice.count
            var info = ResponseInfo.remote(name, etag: etag)
            info.applied = .init(predicate: true, sort: true, window: false)
            info.page = PageInfo(
                style: .pageNumber, size: size, start: start, records: slice.count,
                next: end < state.bands.count ? .record(end) : nil, listing: info.applied, total: state.bands.count,
                wholeCollection: true)
            return StoreResponse(.fetched(.objects(slice)), info: info)
        }
    }
}

extension ResponseInfo {
    /// A backend's answer with an ETag.
    fileprivate static func remote(_ name: String, etag: String, notModified: Bool = false) -> ResponseInfo {
        var info = ResponseInfo(answeredBy: name, origin: .remote, notModified: notModified)
        info.freshness = ResponseFreshness(validators: Validators(etag: etag))
        return info
    }
}

/// A listing that is one document with an ETag: it answers a page request with everything.
private final class OneDocumentBands: StoreResponder {
    let name = "OneDocumentBands"
    let log = Locked<[String]>([])

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        guard case .page(_, let page) = request else {
            throw StoreChainError(.invalidRequest, "OneDocumentBands answers page requests only")
        }
        let conditional = page.validators == nil ? "" : " if-changed"
        if page.validators?.etag == "\"v1\"" {
            log.withLock { $0.append("304\(conditional)") }
            return StoreResponse(.fetched(.objects([])), info: .remote(name, etag: "\"v1\"", notModified: true))
        }
        log.withLock { $0.append("200\(conditional)") }
        return StoreResponse(
            .fetched(.objects((1...3).map(VersionedBands.band))),
            info: .remote(name, etag: "\"v1\""))
    }
}

/// An answer a pager stitched from pages is revalidated page by page: each page with its own
/// validators, "not modified" only when every page is.
@Suite struct PageRevalidationTests {
    let clock = ManualClock()

    private func chain(_ terminal: VersionedBands) -> Chain {
        Chain(
            handlers: [
                MemoryCache(
                    model: terminal.model, options: CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(60)))),
                PaginationHandler(model: terminal.model, options: .init(pageSize: 10, concurrency: 1)),
            ], terminal: terminal, clock: clock)
    }

    private func expected(_ terminal: VersionedBands, _ request: FetchRequest) throws -> FetchResult {
        try InMemoryStore(model: terminal.model, nodes: terminal.bands).fetch(request)
    }

    private let all = FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("name")])

    @Test func anUnchangedListingCostsOneConditionalRequestPerPageAndNoRecords() async throws {
        let terminal = try VersionedBands(count: 25)
        let chain = chain(terminal)
        #expect(try await chain.fetch(all) == (try expected(terminal, all)))
        #expect(terminal.log == ["200 @0", "200 @10", "200 @20"])
        await clock.advance(by: .seconds(61))
        #expect(try await chain.fetch(all) == (try expected(terminal, all)))
        #expect(
            terminal.log.dropFirst(3) == ["304 @0 if-changed", "304 @10 if-changed", "304 @20 if-changed"])
        // Renewed: within the ttl again, nothing is sent.
        #expect(try await chain.fetch(all) == (try expected(terminal, all)))
        #expect(terminal.log.count == 6)
    }

    @Test func aChangedPageMakesThePagerReadTheListingAgain() async throws {
        let terminal = try VersionedBands(count: 25)
        let chain = chain(terminal)
        _ = try await chain.fetch(all)
        terminal.change { $0[14].attributes["name"] = .string("Band 015 (renamed)") }
        await clock.advance(by: .seconds(61))
        #expect(try await chain.fetch(all) == (try expected(terminal, all)))
        #expect(
            terminal.log.dropFirst(3) == ["304 @0 if-changed", "200 @10 if-changed", "200 @0", "200 @10", "200 @20"])
    }

    /// Behind a pager, a listing that turns out to be one document is revalidated with its own
    /// validators (they were once dropped before the pager knew it did not page).
    @Test func aListingThatDoesNotPageIsRevalidatedWithItsValidators() async throws {
        let terminal = OneDocumentBands()
        let model = try MusicFixture.model()
        let chain = Chain(
            handlers: [
                MemoryCache(model: model, options: CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(60)))),
                PaginationHandler(model: model),
            ], terminal: terminal, clock: clock)
        let first = try await chain.fetch(all)
        await clock.advance(by: .seconds(61))
        #expect(try await chain.fetch(all) == first)
        #expect(terminal.log.withLock { $0 } == ["200", "304 if-changed"])
    }

    /// A last page that is full says nothing of a page after it: a band added there is not on
    /// any page read, so such an answer is read again in full instead of revalidated.
    @Test func aListingEndingOnAFullPageIsReadAgainInFull() async throws {
        let terminal = try VersionedBands(count: 20)
        let chain = chain(terminal)
        _ = try await chain.fetch(all)
        terminal.change { $0.append(VersionedBands.band(21)) }
        await clock.advance(by: .seconds(61))
        #expect(try await chain.fetch(all) == (try expected(terminal, all)))
        #expect(terminal.log.dropFirst(2) == ["200 @0", "200 @10", "200 @20"])
    }
}
