extension RelatedLoader {
    /// The relationship paths a request needs loaded to be evaluated in memory: the plan's hops
    /// (its predicate, sort and chosen properties) and its prefetching. A last hop read only for
    /// its key (`band.id`) loads the relationship but not the object it leads to (`objectHops`).
    package func neededPaths(_ plan: FetchPlan) -> [LoadPath] {
        var paths: [LoadPath] = []
        for hops in plan.hops {
            let path = LoadPath(names: hops.names, objectHops: hops.objectHops)
            if !path.names.isEmpty, !paths.contains(path) { paths.append(path) }
        }
        for keyPath in plan.request.relationshipKeyPathsForPrefetching {
            let names = keyPath.split(separator: ".").map(String.init)
            let path = LoadPath(names: names, objectHops: names.count)
            if !paths.contains(where: { $0.names == names }) { paths.append(path) }
        }
        return paths
    }

    /// The relationships along `path` that loading it may read: all of them, but a last hop read
    /// only for its key when the records carry that key (for explanations).
    package func namesRead(along path: LoadPath, from entity: String) -> [String] {
        guard path.objectHops < path.names.count, let last = path.names.last else { return path.names }
        var owner = entity
        for name in path.names.dropLast() {
            guard let destination = model.entity(named: owner)?.relationship(named: name)?.destination else { break }
            owner = destination
        }
        if case .ownRequest = relationshipSource(last, of: owner) { return path.names }
        return Array(path.names.dropLast())
    }
}

/// The relationships along a key path to load, and how many of its hops lead to objects that
/// must be loaded too (all but a last hop read only for its key, `band.id`).
package struct LoadPath: Sendable, Hashable {
    package var names: [String]
    package var objectHops: Int

    package init(names: [String], objectHops: Int) {
        self.names = names
        self.objectHops = objectHops
    }

    /// `album.band`.
    package var text: String { names.joined(separator: ".") }
}
