import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// A terminal over records in memory, paged, that filters nothing: bands' albums are read with a
/// request of their own (a relationship fault, as `GET /bands/{id}/albums` would be), albums name
/// their band by key. `described` says so to the query engine (`BackendReads`); otherwise it says
/// nothing and the engine reads the plain way.
private struct ListingTerminal: PagedResponder {
    let model: ObjectModel
    let records: [String: [Node]]
    let described: Bool
    let requests = SharedLog()
    static let pageSize = 10

    var defaultPagination: PaginationOptions { PaginationOptions() }

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        switch request {
        case .page(let fetch, let page):
            guard case .record(let start) = page.position else {
                throw StoreChainError(.invalidRequest, "pages by record position only, not \(page)")
            }
            requests.append("\(fetch.entity) page at \(start)")
            let all = records[fetch.entity] ?? []
            let size = page.size ?? Self.pageSize
            let slice = Array(all.dropFirst(start).prefix(size))
            var info = ResponseInfo(answeredBy: name, origin: .remote, applied: .nothing)
            info.page = PageInfo(
                style: .offset, size: size, start: start, records: slice.count,
                next: start + slice.count < all.count ? .record(start + slice.count) : nil, listing: .nothing,
                total: all.count, wholeCollection: true)
            return StoreResponse(.fetched(.objects(slice)), info: info)
        case .relationshipFault(let owner, "albums"), .relationshipPage(let owner, "albums", _):
            requests.append("\(owner).albums")
            let albums = (records["Album"] ?? []).filter { $0.relationships["band"] == .toOne(owner) }
            return StoreResponse(
                .relationship(.toMany(albums.map(\.id))), related: albums,
                info: ResponseInfo(answeredBy: name, origin: .remote))
        default:
            throw StoreChainError(.noEndpoint, "the listing terminal does not answer \(request)")
        }
    }
}

extension ListingTerminal: BackendReads {
    func relationshipSource(_ relationship: String, of entity: String) -> RelationshipSource {
        guard described else { return .ownRequest("as a relationship fault") }
        return relationship == "albums" ? .ownRequest("by its own request") : .keyInRecord("by key")
    }

    func pushesDown(_ predicate: FetchPredicate, of entity: String) throws -> Bool { !described }

    func listingPaging(of entity: String) throws -> ListingPaging { .pages(size: Self.pageSize) }

    func readsObjectsByKey(of entity: String) -> Bool { true }
}

/// A terminal of any kind that says how its backend reads (`BackendReads`) gets the query
/// engine's cost rule: the related objects a fetch needs are read the cheapest way, here the
/// destination's whole listing (its size learned from one page) instead of one request per owner.
@Suite struct BackendReadsTests {
    private static func terminal(described: Bool) async throws -> (ListingTerminal, InMemoryStore) {
        let oracle = try MusicFixture.store()
        var records: [String: [Node]] = [:]
        for entity in oracle.model.entities {
            let response = try await oracle.respond(
                to: .fetch(FetchRequest(entity: entity.name, sortDescriptors: [FetchSortDescriptor("id")])),
                context: RequestContext())
            guard case .objects(let nodes) = try response.fetchResult() else { continue }
            // As a backend keeps them: each record holds its to-one, no list of what refers to it.
            records[entity.name] = nodes.map { node in
                var record = node
                for relationship in entity.relationships where relationship.isToMany {
                    record.relationships[relationship.name] = nil
                }
                return record
            }
        }
        return (ListingTerminal(model: oracle.model, records: records, described: described), oracle)
    }

    @Test func aTerminalThatDescribesItsReadsGetsTheCheaperWayToReadRelatedObjects() async throws {
        let request = FetchRequest(
            entity: "Band", predicate: try FetchPredicate("ANY albums.year > 2000"),
            sortDescriptors: [FetchSortDescriptor("id")])
        for described in [false, true] {
            let (terminal, oracle) = try await Self.terminal(described: described)
            let chain = Chain(handlers: [], terminal: terminal, tracing: nil)
            let expected = try await oracle.respond(to: .fetch(request), context: RequestContext()).fetchResult()
            #expect(try await chain.fetch(request) == expected)
            let requests = terminal.requests.all
            if described {
                // The bands, the albums' first page to learn the listing's size (one page), the
                // albums' listing grouped by band: three requests for four bands.
                #expect(requests == ["Band page at 0", "Album page at 0", "Album page at 0"], "\(requests)")
            } else {
                // The plain way: one request for each band's albums.
                #expect(
                    requests == ["Band page at 0"] + (1...4).map { "Band/\($0).albums" }, "\(requests)")
            }
            await chain.shutdown()
        }
    }
}
