import Foundation
@_spi(Internals) import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// The predicate runs once per record: where the terminal evaluated it (its pages' `applied.predicate`),
/// neither the pager at the seam nor the memory and disk caches above it evaluate it again. The
/// terminal here counts its evaluations and plants a record it calls a match, which anything
/// evaluating the predicate again would drop.
@Suite struct PredicateRunsOnceTests {
    /// Answers pages of the music fixture's albums, evaluating the whole predicate itself.
    final class EvaluatingTerminal: PagedResponder {
        let model: ObjectModel
        let store: InMemoryStore
        let evaluations = Locked(0)
        static let planted = Node(
            id: ObjectID(entity: "Album", key: 999), attributes: ["id": 999, "title": "Planted", "year": 1990])

        init() throws {
            store = try MusicFixture.store()
            model = store.model
        }

        var defaultPagination: PaginationOptions { PaginationOptions() }

        func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
            guard case .page(let fetch, let page) = request, case .record(let start) = page.position, start == 0 else {
                throw StoreChainError(.noEndpoint, "this terminal answers the first page of a fetch only")
            }
            let predicate = try FetchPlan.planned(fetch, model: model).predicate
            let snapshot = store.snapshot
            let records = snapshot.nodes(of: fetch.entity)
            evaluations.withLock { $0 += records.count }
            let matches = records.filter { predicate?.evaluate($0, in: snapshot) ?? true } + [Self.planted]
            // Matches only (the predicate evaluated here), in no known order.
            var info = ResponseInfo(
                answeredBy: name, origin: .localStore, applied: .init(predicate: true, sort: false, window: false))
            info.page = PageInfo(
                style: .offset, size: records.count + 1, start: 0, records: records.count, next: nil,
                listing: .nothing, total: records.count)
            return StoreResponse(.fetched(.objects(matches)), info: info)
        }
    }

    @Test func neitherThePagerNorTheCachesEvaluateWhatTheTerminalDid() async throws {
        let terminal = try EvaluatingTerminal()
        let path = TemporaryFolder.make("storechain").appending(path: "cache.sqlite").path
        let chain = Chain(
            handlers: [MemoryCache(model: terminal.model), DiskCache(model: terminal.model, path: path)],
            terminal: terminal)
        let request = try TestData.fetch("Album", where: "year > 2000", sort: [FetchSortDescriptor("id")])
        let albums = terminal.store.snapshot.nodes(of: "Album").count

        for attempt in ["cold", "warm"] {
            guard case .objects(let found) = try await chain.fetch(request) else {
                Issue.record("no objects")
                return
            }
            #expect(
                found.map(\.id).contains(EvaluatingTerminal.planted.id),
                "\(attempt): the predicate was evaluated again above the terminal")
            #expect(terminal.evaluations.withLock { $0 } == albums, "\(attempt): once per record read")
        }
        await chain.shutdown()
    }
}
