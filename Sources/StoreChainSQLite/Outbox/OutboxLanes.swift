import StoreChain

/// The outbox's entries split into lanes that can replay side by side: each lane keeps the
/// order the saves were made in, and two saves that depend on each other are always in the
/// same lane.
///
/// Two saves depend on each other when
/// - they mention a common object (one changes it, or points a relationship at it: an album
///   inserted for a band still waiting, an update of an object a waiting save inserts), or
/// - one deletes objects of an entity and the other touches that entity or one it is related
///   to (a backend may cascade the delete, or refuse it while related objects point at it).
///
/// Everything else is independent and may reach the backend in any order.
struct OutboxLanes: Sendable {
    /// Each lane's entry IDs, oldest first; lanes in the order of their first entry.
    let lanes: [[Int64]]

    /// - Parameters:
    ///   - entries: the saves to replay (pending and failed) by entry, oldest first.
    ///   - model: the relationships a delete may reach through.
    ///   - separate: whether independent saves get lanes of their own; `false` puts every
    ///     entry in one lane, in the order made.
    init(_ entries: [(id: Int64, changes: SaveChanges)], model: ObjectModel, separate: Bool) {
        guard separate, entries.count > 1 else {
            lanes = entries.isEmpty ? [] : [entries.map(\.id)]
            return
        }
        // Entities each deleted entity may reach: its own, and those related to it either way.
        var reach: [String: Set<String>] = [:]
        for entity in Set(entries.flatMap(\.changes.deleted).map(\.entity)) {
            var reached: Set = [entity]
            for other in model.entities {
                let destinations = other.relationships.map(\.destination)
                if other.name == entity { reached.formUnion(destinations) }
                if destinations.contains(entity) { reached.insert(other.name) }
            }
            reach[entity] = reached
        }
        let reached = reach.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        var groups = UnionFind(count: entries.count)
        var owners: [Token: Int] = [:]
        for (index, entry) in entries.enumerated() {
            for token in Self.tokens(of: entry.changes, reach: reach, reached: reached) {
                if let owner = owners[token] { groups.union(owner, index) } else { owners[token] = index }
            }
        }
        var lanes: [[Int64]] = []
        var laneOfRoot: [Int: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let root = groups.find(index)
            if let lane = laneOfRoot[root] {
                lanes[lane].append(entry.id)
            } else {
                laneOfRoot[root] = lanes.count
                lanes.append([entry.id])
            }
        }
        self.lanes = lanes
    }

    private enum Token: Hashable {
        case object(ObjectID)
        case entity(String)
    }

    /// What a save shares with the saves it depends on: the objects it mentions, the entities
    /// among them a delete may reach, and the entities its own deletes may reach.
    private static func tokens(of changes: SaveChanges, reach: [String: Set<String>], reached: Set<String>)
        -> Set<Token>
    {
        var objects = Set(changes.deleted)
        for node in changes.inserted + changes.updated {
            objects.insert(node.id)
            for value in node.relationships.values { objects.formUnion(value.objectIDs) }
        }
        var tokens = Set(objects.map(Token.object))
        for entity in Set(objects.map(\.entity)) where reached.contains(entity) { tokens.insert(.entity(entity)) }
        for deleted in Set(changes.deleted.map(\.entity)) {
            for entity in reach[deleted] ?? [] { tokens.insert(.entity(entity)) }
        }
        return tokens
    }
}

/// Disjoint sets of `0..<count`, joined by `union`.
private struct UnionFind {
    private var parent: [Int]

    init(count: Int) { parent = Array(0..<count) }

    mutating func find(_ element: Int) -> Int {
        var root = element
        while parent[root] != root { root = parent[root] }
        var current = element
        while parent[current] != root { (parent[current], current) = (root, parent[current]) }
        return root
    }

    mutating func union(_ first: Int, _ second: Int) {
        let (a, b) = (find(first), find(second))
        if a != b { parent[max(a, b)] = min(a, b) }
    }
}
