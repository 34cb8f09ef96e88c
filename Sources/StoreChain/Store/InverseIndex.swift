/// Which objects point at each object, by the name of the inverse relationship that would list
/// them: the pointers a relationship given on one side implies on the other.
struct InverseIndex {
    /// `owners[target][inverse name]` = the objects pointing at `target`, in the order given.
    private(set) var owners: [ObjectID: [String: [ObjectID]]] = [:]

    init(_ nodes: some Sequence<Node>, model: ObjectModel) {
        for node in nodes {
            guard let entity = model.entity(named: node.id.entity) else { continue }
            for relationship in entity.relationships {
                guard let inverse = relationship.inverse, let value = node.relationships[relationship.name] else {
                    continue
                }
                for target in value.objectIDs { owners[target, default: [:]][inverse, default: []].append(node.id) }
            }
        }
    }

    /// The objects that point at `id` through the inverse of its relationship `name`.
    func owners(of id: ObjectID, through name: String) -> [ObjectID] {
        owners[id]?[name] ?? []
    }
}

extension ObjectModel {
    /// The to-many lists `node` joins through its to-ones (`album.tracks` for a track with its
    /// album), for owners with permanent IDs: what a new object the caches cannot hold yet
    /// changes in the lists they do.
    package func listsJoined(by node: Node) -> [(owner: ObjectID, list: String)] {
        guard let owned = entity(named: node.id.entity) else { return [] }
        return owned.relationships.compactMap { relationship in
            guard !relationship.isToMany, let inverse = relationship.inverse,
                entity(named: relationship.destination)?.relationship(named: inverse)?.isToMany == true,
                case .toOne(let owner?)? = node.relationships[relationship.name], !owner.isTemporary
            else { return nil }
            return (owner, inverse)
        }
    }

    /// Fills in the relationships that `nodes` leave out, from their inverses, where the other
    /// side's whole collection is among `nodes` (so an empty list really means none). `nodes`
    /// are in data order, which gives to-many lists their order.
    package func fillingMissingInverses(of nodes: [Node], completeEntities: Set<String>) -> [Node] {
        let index = InverseIndex(nodes, model: self)
        return nodes.map { node in
            guard let entity = entity(named: node.id.entity) else { return node }
            var node = node
            for relationship in entity.relationships
            where node.relationships[relationship.name] == nil && relationship.inverse != nil
                && completeEntities.contains(relationship.destination)
            {
                let owners = index.owners(of: node.id, through: relationship.name)
                node.relationships[relationship.name] = relationship.isToMany ? .toMany(owners) : .toOne(owners.first)
            }
            return node
        }
    }
}
