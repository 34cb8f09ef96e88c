import Foundation
import StoreChain

/// How `SQLiteStore` writes a node (the disk cache uses `NodePayload`): everything but its
/// freshness, as JSON.
package struct StoredNode: Codable {
    package struct Reference: Codable, Hashable {
        var entity: String
        var key: Value

        package init(_ id: ObjectID) throws(StoreChainSQLiteError) {
            guard let key = id.key else { throw StoreChainSQLiteError("\(id) is temporary and cannot be cached") }
            entity = id.entity
            self.key = key
        }

        package var id: ObjectID { ObjectID(entity: entity, key: key) }
    }

    enum Relationship: Codable {
        case one(Reference?)
        case many([Reference])
    }

    var id: Reference
    var attributes: [String: Value]
    var relationships: [String: Relationship]
    var version: String?

    init(_ node: Node) throws(StoreChainSQLiteError) {
        id = try Reference(node.id)
        attributes = node.attributes.dictionary
        var relationships: [String: Relationship] = [:]
        for (name, value) in node.relationships {
            switch value {
            case .toOne(let target):
                relationships[name] = .one(
                    try target.map { target throws(StoreChainSQLiteError) in try Reference(target) })
            case .toMany(let targets):
                var references: [Reference] = []
                for target in targets { references.append(try Reference(target)) }
                relationships[name] = .many(references)
            }
        }
        self.relationships = relationships
        version = node.version
    }

    func node(freshness: Freshness) -> Node {
        Node(
            id: id.id, attributes: AttributeValues(attributes),
            relationships: relationships.mapValues { value in
                switch value {
                case .one(let target): .toOne(target?.id)
                case .many(let targets): .toMany(targets.map(\.id))
                }
            }, version: version, freshness: freshness)
    }

    /// The text that identifies an object in the file: its entity and its key's JSON
    /// (`Band/{"integer":42}`). Integer keys, the common case, are written without an encoder.
    package static func key(for id: ObjectID) throws -> String {
        let reference = try Reference(id)
        if case .integer(let number) = reference.key { return reference.entity + #"/{"integer":"# + "\(number)}" }
        return reference.entity + "/" + String(decoding: try JSONEncoder().encode(reference.key), as: UTF8.self)
    }

    /// The object a `key(for:)` text identifies.
    package static func id(forKey key: String) throws -> ObjectID {
        guard let slash = key.firstIndex(of: "/") else { throw StoreChainSQLiteError("'\(key)' is not a cache key") }
        let value = try JSONDecoder().decode(Value.self, from: Data(key[key.index(after: slash)...].utf8))
        return ObjectID(entity: String(key[..<slash]), key: value)
    }
}

/// How a query window is written in the cache file.
package struct StoredQuery: Codable {
    package var request: FetchRequest
    package var ids: [StoredNode.Reference]
    package var reachesEnd: Bool
    /// A counted query's count (absent in files written before counts were stored).
    package var count: Int?
    /// The entities its answer reads (`CachedQuery.reads`).
    package var reads: Set<String>

    package init(_ query: CachedQuery) throws(StoreChainSQLiteError) {
        request = query.request
        ids = try query.ids.map { id throws(StoreChainSQLiteError) in try .init(id) }
        reachesEnd = query.reachesEnd
        count = query.count
        reads = query.reads
    }

    package func cachedQuery(freshness: Freshness) -> CachedQuery {
        CachedQuery(
            request: request, ids: ids.map(\.id), reachesEnd: reachesEnd, freshness: freshness, count: count,
            reads: reads)
    }
}
