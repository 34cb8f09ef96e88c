import StoreChain

/// The saves an outbox holds and has not sent yet, in the order they were made: what the app
/// must read back over whatever the backend answers until they are sent.
struct PendingWrites: Sendable {
    private struct Held: Sendable {
        let id: Int64
        var changes: SaveChanges
    }

    private var held: [Held] = []
    /// Worked out on first use after a change, for every read until the next change.
    private var cachedView: PendingView?
    /// Counts the changes, so a read can tell that a replay sent saves while it was answered.
    private(set) var generation = 0

    var isEmpty: Bool { held.isEmpty }

    /// The held saves by entry, oldest first.
    var saves: [(id: Int64, changes: SaveChanges)] { held.map { ($0.id, $0.changes) } }

    /// Holds the save of entry `id` (kept in entry order).
    mutating func add(_ id: Int64, _ changes: SaveChanges) {
        let index = held.firstIndex { $0.id > id } ?? held.endIndex
        if index > 0, held[index - 1].id == id {
            held[index - 1].changes = changes
        } else {
            held.insert(Held(id: id, changes: changes), at: index)
        }
        cachedView = nil
        generation += 1
    }

    /// Forgets the save of entry `id` (sent, refused or discarded).
    mutating func remove(_ id: Int64) {
        held.removeAll { $0.id == id }
        cachedView = nil
        generation += 1
    }

    /// Gives the objects the backend has just inserted their permanent IDs in every held save.
    mutating func remap(_ permanentIDs: [ObjectID: ObjectID]) {
        guard !permanentIDs.isEmpty else { return }
        for index in held.indices { held[index].changes = held[index].changes.remapping(permanentIDs) }
        cachedView = nil
        generation += 1
    }

    /// The end state of what the held saves change.
    mutating func view(model: ObjectModel) -> PendingView {
        if let cachedView { return cachedView }
        let view = PendingView(held.map(\.changes), model: model)
        cachedView = view
        return view
    }
}

/// What the held saves do to the objects they change, applied in order: each object's end
/// state, and the relationship lists of other objects that change with it (an album inserted
/// for a band belongs in the band's `albums`).
struct PendingView: Sendable {
    enum Outcome: Sendable {
        /// Inserted (with its temporary ID) and possibly updated since.
        case inserted(Node)
        /// The changed attributes and relationships of an object the backend holds.
        case updated(Node)
        case deleted
    }

    let outcomes: [ObjectID: Outcome]
    /// Every entity whose objects read differently: those changed, and those on the other side
    /// of a changed relationship.
    let entities: Set<String>
    /// Owner → inverse relationship → the objects whose pending state names the owner there.
    private let links: [ObjectID: [String: [ObjectID]]]
    private let model: ObjectModel

    init(_ saves: [SaveChanges], model: ObjectModel) {
        self.model = model
        var outcomes: [ObjectID: Outcome] = [:]
        for changes in saves {
            for node in changes.inserted { outcomes[node.id] = .inserted(node) }
            for update in changes.updated {
                switch outcomes[update.id] {
                case .inserted(var node):
                    node.apply(update)
                    outcomes[update.id] = .inserted(node)
                case .updated(var node):
                    node.combine(update)
                    outcomes[update.id] = .updated(node)
                case .deleted: continue
                case nil: outcomes[update.id] = .updated(update)
                }
            }
            for id in changes.deleted { outcomes[id] = .deleted }
        }
        var entities = Set(outcomes.keys.map(\.entity))
        var links: [ObjectID: [String: [ObjectID]]] = [:]
        for (id, outcome) in outcomes.sorted(by: { $0.key.description < $1.key.description }) {
            let node: Node
            switch outcome {
            case .inserted(let inserted): node = inserted
            case .updated(let update): node = update
            case .deleted:
                // Lists naming it lose it: every entity it can be listed by reads differently.
                for relationship in model.entity(named: id.entity)?.relationships ?? []
                where relationship.inverse != nil {
                    entities.insert(relationship.destination)
                }
                continue
            }
            guard let entity = model.entity(named: id.entity) else { continue }
            for (name, value) in node.relationships {
                guard let relationship = entity.relationship(named: name), let inverse = relationship.inverse else {
                    continue
                }
                entities.insert(relationship.destination)
                for owner in value.objectIDs { links[owner, default: [:]][inverse, default: []].append(id) }
            }
        }
        self.outcomes = outcomes
        self.entities = entities
        self.links = links
    }

    /// Whether the object was deleted by a held save.
    func isDeleted(_ id: ObjectID) -> Bool {
        if case .deleted = outcomes[id] { return true }
        return false
    }

    /// The inserted objects of `entity` not sent yet, with their temporary IDs.
    func inserted(of entity: String) -> [Node] {
        outcomes.compactMap { id, outcome in
            guard id.entity == entity, case .inserted = outcome else { return nil }
            return show(id: id)
        }.sorted { $0.id.description < $1.id.description }
    }

    /// Objects of `entity` the backend holds whose values or relationship lists the held saves
    /// change: a fetch must consider them even when the backend's answer leaves them out.
    func changedObjects(of entity: String) -> [ObjectID] {
        var ids = Set<ObjectID>()
        for (id, outcome) in outcomes where id.entity == entity && !id.isTemporary {
            if case .updated = outcome { ids.insert(id) }
        }
        for owner in links.keys where owner.entity == entity && !owner.isTemporary && !isDeleted(owner) {
            ids.insert(owner)
        }
        return ids.sorted { $0.description < $1.description }
    }

    /// The object as the app expects to read it, or `nil` when a held save deleted it.
    func show(_ node: Node) -> Node? {
        var node = node
        switch outcomes[node.id] {
        case .deleted: return nil
        case .inserted(let inserted): node = inserted
        case .updated(let update): node.apply(update)
        case nil: break
        }
        adjustLists(of: &node)
        return node
    }

    /// The object of a held insert, as the app expects to read it; `nil` for another.
    func show(id: ObjectID) -> Node? {
        guard case .inserted(let node) = outcomes[id] else { return nil }
        return show(node)
    }

    /// Whether the held saves change what `relationship` of `id` holds.
    func changes(_ relationship: String, of id: ObjectID) -> Bool {
        if links[id]?[relationship] != nil { return true }
        switch outcomes[id] {
        case .inserted(let node), .updated(let node): if node.relationships[relationship] != nil { return true }
        case .deleted, nil: break
        }
        // A list holding an object a held save deleted or moved away.
        let destination = model.destination(of: relationship, from: id.entity)
        return outcomes.keys.contains { $0.entity == destination }
    }

    /// The relationship's value after the held saves: objects they deleted leave it, objects
    /// whose pending state names this object on the other side join it, and those that name
    /// another object there leave it.
    func adjust(_ value: RelationshipValue, _ name: String, of owner: ObjectID) -> RelationshipValue {
        let inverse = model.entity(named: owner.entity)?.relationship(named: name)?.inverse
        func belongs(_ id: ObjectID) -> Bool {
            switch outcomes[id] {
            case .deleted: return false
            case .inserted(let node), .updated(let node):
                guard let inverse, let other = node.relationships[inverse] else { return true }
                return other.objectIDs.contains(owner)
            case nil: return true
            }
        }
        let joining = links[owner]?[name] ?? []
        switch value {
        case .toMany(let ids):
            var kept = ids.filter(belongs)
            for id in joining where !kept.contains(id) { kept.append(id) }
            return .toMany(kept)
        case .toOne(let id):
            if let joined = joining.last { return .toOne(joined) }
            return .toOne(id.flatMap { belongs($0) ? $0 : nil })
        }
    }

    private func adjustLists(of node: inout Node) {
        for (name, value) in node.relationships {
            node.relationships[name] = adjust(value, name, of: node.id)
        }
        // Lists not known yet but joined by a held save are left unknown: reading the
        // relationship goes upstream and is adjusted then.
    }
}

extension ObjectModel {
    /// The destination entity of `relationship` on `entity`, when both exist.
    fileprivate func destination(of relationship: String, from entity: String) -> String? {
        self.entity(named: entity)?.relationship(named: relationship)?.destination
    }
}
