import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// A small music catalog whose answers are computed by hand in the tests.
enum Fixtures {
    static func model() throws -> ObjectModel { try MusicFixture.model() }

    static let recordsJSON = MusicFixture.recordsJSON

    static func store() throws -> InMemoryStore { try MusicFixture.store() }

    /// The integer keys of the matching objects, in fetch order (sorted by key unless asked).
    static func keys(
        _ store: InMemoryStore, _ entity: String, _ predicate: FetchPredicate?, sort: [FetchSortDescriptor] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws -> [Int] {
        let request = FetchRequest(
            entity: entity, predicate: predicate, sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset)
        guard case .objects(let nodes) = try store.fetch(request) else {
            Issue.record("expected objects")
            return []
        }
        return nodes.map { node in
            guard case .integer(let key)? = node.id.key else { return -1 }
            return key
        }
    }

    static func date(_ text: String) -> Date {
        ISO8601.parse(text) ?? Date(timeIntervalSince1970: .nan)
    }
}
