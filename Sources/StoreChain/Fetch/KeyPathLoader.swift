/// Loads what evaluating a fetch over objects reads and their answer did not bring, so a terminal
/// that sends records as it stores them gets key paths for free: a relationship a record leaves
/// out (`Band.albums`, for `albums.@count`) is read as a relationship fault, and the related
/// objects a key path reads (`album.band.name`) as one fetch by key per hop. Every read is a
/// sub-request from the top of the chain, so the caches answer what they hold.
struct KeyPathLoader {
    let model: ObjectModel
    let context: RequestContext
    /// The request whose evaluation needs the reads.
    let parent: StoreRequest

    /// Loads along `plan`'s hops from `nodes` into `source` (which holds them and what came with
    /// them), and gives `nodes` the relationships read for them.
    func load(for plan: FetchPlan, nodes: inout [Node], source: inout [ObjectID: Node]) async throws {
        guard !plan.hops.isEmpty else { return }
        for path in plan.hops {
            var level = nodes.map(\.id)
            for (index, name) in path.names.enumerated() {
                try await readRelationship(name, of: level, source: &source)
                guard index < path.objectHops else { break }
                var targets: [ObjectID] = []
                var seen: Set<ObjectID> = []
                for id in level {
                    for target in source[id]?.relationships[name]?.objectIDs ?? [] where seen.insert(target).inserted {
                        targets.append(target)
                    }
                }
                try await readObjects(targets.filter { source[$0] == nil }, into: &source)
                level = targets
            }
        }
        nodes = nodes.map { source[$0.id] ?? $0 }
    }

    /// Reads `name` of each of `owners` whose record leaves it out, one relationship fault each.
    private func readRelationship(_ name: String, of owners: [ObjectID], source: inout [ObjectID: Node])
        async throws
    {
        for owner in owners {
            guard var node = source[owner], node.relationships[name] == nil else { continue }
            let response = try await context.subrequestThroughChain(
                .relationshipFault(owner, relationship: name), serving: parent)
            node.relationships[name] = try response.relationshipValue()
            source[owner] = node
            for related in response.related where source[related.id] == nil { source[related.id] = related }
        }
    }

    /// Reads the objects `ids` name, one fetch by key per entity.
    private func readObjects(_ ids: [ObjectID], into source: inout [ObjectID: Node]) async throws {
        for (entityName, ofEntity) in Dictionary(grouping: ids, by: \.entity).sorted(by: { $0.key < $1.key }) {
            let entity = try model.requireEntity(entityName)
            let keys = ofEntity.compactMap(\.key).map(Operand.constant)
            let fetch = FetchRequest(
                entity: entityName,
                predicate: .comparison(Comparison(.keyPath([entity.key]), .in, .array(keys))))
            let response = try await context.subrequestThroughChain(.fetch(fetch), serving: parent)
            let found = try response.fetchedObjects(for: fetch)
            for node in response.related where source[node.id] == nil { source[node.id] = node }
            for node in found { source[node.id] = node }
        }
    }
}
