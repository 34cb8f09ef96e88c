import Foundation
import StoreChain

/// The object-graph test's reference: the music catalog as plain dictionaries. An object is its
/// attributes and its to-one targets; a to-many list is worked out from the inverse to-ones, and
/// delete rules (nullify, and cascade from an album to its tracks) are applied by hand. Nothing
/// here uses StoreChain's evaluator, caches or context: it is what they are checked against.
struct ReferenceGraph {
    struct Object: Equatable {
        var attributes: [String: Value]
        /// To-one relationship name → target (`nil`: none).
        var toOne: [String: ObjectID?] = [:]
    }

    /// Each entity's to-one relationship and the to-many inverse on its target.
    static let toOne: [String: (name: String, destination: String, inverse: String)] = [
        "Album": ("band", "Band", "albums"), "Track": ("album", "Album", "tracks"),
    ]
    /// Each entity's to-many relationship and the to-one on its members.
    static let toMany: [String: (name: String, member: String, inverse: String)] = [
        "Band": ("albums", "Album", "band"), "Album": ("tracks", "Track", "album"),
    ]

    var objects: [ObjectID: Object] = [:] {
        didSet { memberIndex = MemberIndex() }
    }

    /// Owner → members, worked out on first use after a change (a box, so reading a graph
    /// stays non-mutating; a changed graph gets a new one).
    private final class MemberIndex {
        var members: [ObjectID: Set<ObjectID>]?
    }
    private var memberIndex = MemberIndex()

    init(_ nodes: [Node]) {
        for node in nodes {
            var object = Object(attributes: node.attributes.reduce(into: [:]) { $0[$1.key] = $1.value })
            if let relationship = Self.toOne[node.id.entity] {
                object.toOne[relationship.name] = node.relationships[relationship.name]?.objectIDs.first
            }
            objects[node.id] = object
        }
    }

    func ids(of entity: String) -> [ObjectID] {
        objects.keys.filter { $0.entity == entity }.sorted { $0.description < $1.description }
    }

    /// The members of `id`'s to-many relationship, as a set (the test does not check order).
    func members(of id: ObjectID) -> Set<ObjectID> {
        if memberIndex.members == nil {
            var index: [ObjectID: Set<ObjectID>] = [:]
            for (member, object) in objects {
                for case let owner?? in object.toOne.values { index[owner, default: []].insert(member) }
            }
            memberIndex.members = index
        }
        guard Self.toMany[id.entity] != nil else { return [] }
        return memberIndex.members?[id] ?? []
    }

    func target(of id: ObjectID) -> ObjectID? {
        guard let relationship = Self.toOne[id.entity] else { return nil }
        return objects[id]?.toOne[relationship.name] ?? nil
    }

    /// Deletes `id` by the model's rules: an album takes its tracks (cascade); every to-one that
    /// held a deleted object is emptied (nullify). Returns everything deleted.
    @discardableResult
    mutating func delete(_ id: ObjectID) -> Set<ObjectID> {
        var deleted: Set<ObjectID> = []
        var queue = [id]
        while let next = queue.popLast() {
            guard objects[next] != nil, deleted.insert(next).inserted else { continue }
            if next.entity == "Album" { queue.append(contentsOf: members(of: next)) }
        }
        for id in deleted { objects.removeValue(forKey: id) }
        for (id, object) in objects {
            for (name, target) in object.toOne where target.map(deleted.contains) == true {
                objects[id]?.toOne[name] = .some(nil)
            }
        }
        return deleted
    }

    /// A value as the model sees it: an attribute, a to-one's key path (`band.name`), or a
    /// to-many's count (`tracks.@count`).
    func value(_ keyPath: String, of id: ObjectID) -> Value {
        let parts = keyPath.split(separator: ".").map(String.init)
        var current = id
        for (index, part) in parts.enumerated() {
            if index + 1 < parts.count, parts[index + 1] == "@count" {
                return .integer(members(of: current).count)
            }
            if index == parts.count - 1 { return objects[current]?.attributes[part] ?? .null }
            guard let next = target(of: current) else { return .null }
            current = next
        }
        return .null
    }
}

/// One context's unsaved changes in the reference: new objects, changed attributes and to-ones,
/// deletions, as the app made them.
struct ReferenceChanges {
    var inserted: [ObjectID: ReferenceGraph.Object] = [:]
    var updated: [ObjectID: ReferenceGraph.Object] = [:]
    var deleted: Set<ObjectID> = []

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Every object the changes name, as a subject or a relationship's target.
    var mentioned: Set<ObjectID> {
        var ids = Set(inserted.keys).union(updated.keys).union(deleted)
        for object in Array(inserted.values) + Array(updated.values) {
            for case let target? in object.toOne.values { ids.insert(target) }
        }
        return ids
    }

    /// `graph` as this context shows it: the changes over it, deletions by the rules.
    func applied(to graph: ReferenceGraph) -> ReferenceGraph {
        var graph = graph
        for (id, object) in inserted { graph.objects[id] = object }
        for (id, change) in updated {
            guard graph.objects[id] != nil else { continue }
            graph.objects[id]?.attributes.merge(change.attributes) { _, new in new }
            graph.objects[id]?.toOne.merge(change.toOne) { _, new in new }
        }
        for id in deleted { graph.delete(id) }
        return graph
    }
}
