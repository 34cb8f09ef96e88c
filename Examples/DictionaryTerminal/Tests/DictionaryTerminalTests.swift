import DictionaryTerminalExample
import Foundation
import StoreChain
import StoreChainTesting
import Synchronization
import Testing

/// The dictionary terminal, which has no query code, answers through a chain with a memory cache
/// what an `InMemoryStore` over the same records answers: key-path predicates, sorted windows
/// across its pages, counts and relationship faults.
@Suite struct DictionaryTerminalTests {
    /// Counts the terminal's reads of its records: one per request that reaches it.
    final class Reads: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }

    let oracle: InMemoryStore
    let chain: Chain
    let reads = Reads()

    init() async throws {
        oracle = try MusicFixture.store()
        let model = oracle.model
        // The records as a backend keeps them: each holds its to-one, no list of what refers to it.
        var dictionary: [String: [Node]] = [:]
        for entity in model.entities {
            let response = try await oracle.respond(
                to: .fetch(FetchRequest(entity: entity.name, sortDescriptors: [FetchSortDescriptor("id")])),
                context: RequestContext())
            let nodes = try Self.objects(try response.fetchResult())
            dictionary[entity.name] = nodes.reversed().map { node in
                var record = node
                for relationship in entity.relationships where relationship.isToMany {
                    record.relationships[relationship.name] = nil
                }
                return record
            }
        }
        let records = dictionary
        let reads = self.reads
        // Two records a page, so every answer below spans pages.
        let terminal = DictionaryTerminal(model: model, pageSize: 2) { entity in
            reads.add()
            return records[entity] ?? []
        }
        chain = Chain(terminal: terminal, clock: ManualClock(), tracing: nil) {
            CacheHandler(name: "memory", model: model, storage: MemoryCacheStorage())
        }
    }

    static let fetches: [(format: String?, entity: String, sort: [String], limit: Int?, offset: Int)] = [
        ("album.band.name BEGINSWITH 'Sig'", "Track", ["title"], nil, 0),
        ("album.year < 2011", "Track", ["seconds"], 3, 1),
        (nil, "Album", ["year", "title"], 3, 2),
        (nil, "Track", ["album.title", "title"], 4, 0),
        ("ANY tracks.seconds > 300", "Album", ["title"], nil, 0),
        ("albums.@count >= 2", "Band", ["name"], nil, 0),
        ("band.country == 'IS' OR year > 2012", "Album", ["title"], 2, 0),
    ]

    @Test(arguments: fetches)
    func answersAsAStoreOverTheSameRecords(
        _ fetch: (format: String?, entity: String, sort: [String], limit: Int?, offset: Int)
    ) async throws {
        let request = try TestData.fetch(
            fetch.entity, where: fetch.format, sort: fetch.sort.map { FetchSortDescriptor($0) }, limit: fetch.limit,
            offset: fetch.offset)
        let expected = try await oracle.respond(to: .fetch(request), context: RequestContext()).fetchResult()
        let answered = try await chain.fetch(request)
        #expect(ids(answered) == ids(expected), "\(request)")
        #expect(!ids(expected).isEmpty, "a fetch that matches nothing would not test much")
        var counting = request
        counting.resultType = .count
        let expectedCount = try await oracle.respond(to: .fetch(counting), context: RequestContext()).fetchResult()
        #expect(try await chain.fetch(counting) == expectedCount, "\(counting)")
    }

    @Test func relationshipFaultsAreAnsweredThroughTheCaches() async throws {
        for (entity, key, name) in [("Band", 1, "albums"), ("Album", 20, "tracks"), ("Track", 201, "album")] {
            let fault = StoreRequest.relationshipFault(ObjectID(entity: entity, key: .integer(key)), relationship: name)
            let expected = try await oracle.respond(to: fault, context: RequestContext()).relationshipValue()
            let answered = try await chain.send(fault).relationshipValue()
            #expect(Set(answered.objectIDs) == Set(expected.objectIDs), "\(fault)")
            #expect(!expected.objectIDs.isEmpty)
            let before = reads.value
            #expect(try await chain.send(fault).relationshipValue() == answered)
            #expect(reads.value == before, "asked again, \(fault) is answered by the cache")
        }
    }

    private func ids(_ result: FetchResult) -> [ObjectID] {
        if case .objects(let nodes) = result { return nodes.map(\.id) }
        return []
    }

    private static func objects(_ result: FetchResult) throws -> [Node] {
        guard case .objects(let nodes) = result else {
            throw StoreChainError(.invalidResponse, "a fetch of objects answered \(result)")
        }
        return nodes
    }
}
