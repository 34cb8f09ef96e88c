extension FetchPlan {
    /// Checks that `source` holds every related object evaluating the request over `nodes`
    /// reads: the album behind `album.year` in a sort, the tracks behind `ANY tracks.name`.
    /// An answer computed without them would be silently wrong (a missing album sorts as
    /// `nil`), so whoever evaluates a request over nodes it did not load itself checks first.
    ///
    /// A relationship whose value is not known at all is not checked here: the objects a node
    /// names are.
    ///
    /// - Throws: `.incompleteData` naming the object, the key path and the missing object.
    package func requireLoaded(_ nodes: some Sequence<Node>, source: any NodeSource) throws(StoreChainError) {
        guard let (owner, path, missing) = firstUnloaded(nodes, source: source) else { return }
        throw StoreChainError(
            .incompleteData,
            "answering \(request) reads \(missing) through \(owner).\(path), but it was not loaded",
            suggestion: "the handler or terminal that answered must return the related objects its answer used")
    }

    /// The first object a key path leads to from `nodes` that `source` does not hold.
    package func firstUnloaded(_ nodes: some Sequence<Node>, source: any NodeSource)
        -> (owner: ObjectID, path: String, missing: ObjectID)?
    {
        guard !readPaths.isEmpty else { return nil }
        for node in nodes {
            for path in readPaths {
                var level = [node]
                for name in path {
                    var next: [Node] = []
                    for current in level {
                        for id in current.relationships[name]?.objectIDs ?? [] {
                            guard let found = source.node(for: id) else {
                                return (node.id, path.joined(separator: "."), id)
                            }
                            next.append(found)
                        }
                    }
                    level = next
                }
            }
        }
        return nil
    }

    /// The relationships evaluating `request` crosses (its predicate, sort and chosen
    /// properties), each key path's in order, and how many lead to objects that are read: a key
    /// path ending at the destination's key (`band.id`) or at a relationship (`tracks.@count`)
    /// needs only the IDs its last hop holds.
    static func hops(of request: FetchRequest, entity: EntityDescription, model: ObjectModel) -> [RelationshipHops] {
        var keyPaths = request.predicate?.keyPaths ?? []
        keyPaths += request.sortDescriptors.map { $0.keyPath.split(separator: ".").map(String.init) }
        if case .dictionaries(let properties) = request.resultType {
            keyPaths += properties.map { $0.split(separator: ".").map(String.init) }
        }
        var hops: Set<RelationshipHops> = []
        for components in keyPaths {
            guard let resolved = try? ResolvedKeyPath(components, from: entity, in: model) else { continue }
            var names = resolved.steps.map(\.relationship.name)
            var destinations = resolved.steps.map(\.destination.name)
            if case .relationship(let last) = resolved.terminal {
                names.append(last.name)
                destinations.append(last.destination)
            }
            if !names.isEmpty {
                hops.insert(
                    RelationshipHops(
                        names: names, destinations: destinations, objectHops: resolved.objectSteps.count,
                        endsAtRelatedKey: resolved.endsAtRelatedKey))
            }
        }
        return hops.sorted { $0.names.lexicographicallyPrecedes($1.names) }
    }

    /// The fetched entity and every entity whose changes can change the answer: those whose
    /// objects evaluating the request reads, and those of a list it reads at a path's end
    /// (`tracks.@count`), in name order. A path ending at a related key (`band.id`) reads only
    /// the foreign key the fetched objects hold.
    package var reachedEntities: [String] {
        var entities: Set<String> = [entity.name]
        for path in hops {
            entities.formUnion(path.destinations.prefix(path.objectHops))
            if !path.endsAtRelatedKey, path.objectHops < path.destinations.count, let last = path.destinations.last {
                entities.insert(last)
            }
        }
        return entities.sorted()
    }

    /// The fetched entity and every entity a key path of the request passes through or ends at,
    /// the related key's too (`band.id`: deleting the band empties it, and the change names only
    /// Band): what an observation of the request refetches for. Wider than `reachedEntities`,
    /// the entities a cached answer depends on, whose caches drop it on such a deletion
    /// themselves.
    package var observedEntities: Set<String> {
        Set(hops.flatMap(\.destinations)).union([entity.name])
    }

    /// The hops whose destination objects are read, each path once.
    static func readPaths(_ hops: [RelationshipHops]) -> [[String]] {
        let paths = Set(hops.map { Array($0.names.prefix($0.objectHops)) }.filter { !$0.isEmpty })
        return paths.sorted { $0.lexicographicallyPrecedes($1) }
    }
}

/// The relationships one key path crosses from the fetched entity (`album.band.name`: album,
/// band), and how many of them, from the first, lead to objects that are read; the rest are read
/// for the IDs they hold (`band.id`, `tracks.@count`).
package struct RelationshipHops: Sendable, Hashable {
    /// The relationships crossed, in order.
    package var names: [String]
    /// The entity each of `names` leads to.
    package var destinations: [String]
    /// How many of `names`, from the first, lead to objects that are read.
    package var objectHops: Int
    /// The path ends at the key of its last to-one's destination (`band.id`): that relationship
    /// is read for the ID it holds (`ResolvedKeyPath.readsOnlyTheKey`).
    package var endsAtRelatedKey: Bool
}
