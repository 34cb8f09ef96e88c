/// An `ObjectContext`'s objects and the last known row of each, one entry per `ObjectID`.
///
/// Each entry has a slot that the managed object made for it keeps, so reading an object's row
/// is an array access, not a hashed lookup of its ID. A slot stays with its object for the
/// object's life: when its ID moves to another slot (a temporary ID whose permanent one is already
/// known, an object forgotten after a delete), the old slot is marked superseded and its object
/// reads by ID from then on. A slot is reused only after its object is gone and it holds no row.
/// Objects given to the table's methods are ones it made (the context passes only its own).
struct ObjectTable {
    struct Entry {
        enum State {
            /// The slot of `id`.
            case current
            /// Another slot (or none) holds `id` now; the object made for this one reads by ID.
            case superseded
            /// Unused, ready for another ID.
            case free
        }

        var id: ObjectID
        var row: Node?
        /// Set once, by the object made for this slot; never cleared while that object lives.
        var object = WeakObject()
        var state = State.current
        /// The number of the last change event that changed this row (0: none).
        var changedByEvent = 0
    }

    /// How many change events the context has merged; a request notes it when sent, and its
    /// answer does not replace rows an event changed after (`absorb(_:asOf:)`).
    private(set) var events = 0
    /// The event being merged, whose number the rows it changes take.
    private var merging: Int?
    /// Objects without an entry that recent events named, with the number of the last: an
    /// answer already on its way must not bring back their old rows. Pruned as it grows.
    private var namedByEvents: [ObjectID: Int] = [:]
    private var slots: [ObjectID: Int] = [:]
    private var entries: [Entry] = []
    private var freeSlots: [Int] = []
    private var objectsSinceReclaim = 0

    /// Room for `count` more objects without growing the table on the way (a large fetch).
    mutating func reserveCapacity(_ count: Int) {
        slots.reserveCapacity(slots.count + count)
        entries.reserveCapacity(entries.count + count)
    }

    // MARK: Rows

    /// The last known row of `id`.
    func row(for id: ObjectID) -> Node? {
        slots[id].flatMap { entries[$0].row }
    }

    /// The last known row of `object`, without a lookup unless its slot was superseded.
    func row(of object: ManagedObject) -> Node? {
        let entry = entries[object.slot]
        return entry.state == .current ? entry.row : row(for: object.objectID)
    }

    /// The value of attribute `name` in the last known row of `object`; `nil` when there is no
    /// row (a missing attribute in a row is `.null`).
    func value(_ name: String, of object: ManagedObject) -> Value? {
        guard entries[object.slot].state == .current else { return row(for: object.objectID)?[attribute: name] }
        return entries[object.slot].row?[attribute: name]
    }

    /// Whether the table holds a row for `id` or a live object made for it.
    func knows(_ id: ObjectID) -> Bool {
        guard let slot = slots[id] else { return false }
        return entries[slot].row != nil || entries[slot].object.object != nil
    }

    /// A change event is being merged: the rows changed until `endEvent()` are marked as
    /// changed by it.
    mutating func beginEvent() {
        events += 1
        merging = events
    }

    mutating func endEvent() {
        merging = nil
    }

    /// Notes that the event being merged names these objects (changed, inserted or deleted),
    /// whether or not the table holds them.
    mutating func noteNamed(_ ids: some Sequence<ObjectID>) {
        guard let merging else { return }
        for id in ids {
            if let slot = slots[id] { entries[slot].changedByEvent = merging } else { namedByEvents[id] = merging }
        }
        if namedByEvents.count > 10_000 { namedByEvents = namedByEvents.filter { $0.value > merging - 100 } }
    }

    /// Whether an event merged after `events` changed the row in `slot` or named `id`.
    private func changedAfter(_ events: Int, slot: Int, id: ObjectID) -> Bool {
        // Most answers arrive with no event merged meanwhile: no lookup then.
        guard self.events > events else { return false }
        return entries[slot].changedByEvent > events || namedByEvents[id] ?? 0 > events
    }

    /// Records what a fetch, fault or event says about an object: a new row is stored as it
    /// is; a known one takes the new attributes, version and freshness, and keeps the
    /// relationships the new node does not mention. An answer to a request sent when the
    /// context had merged `events` events leaves a row a later event changed as it is (the
    /// answer is older than the event: a save's new version would go back to the old one).
    /// Returns the object's slot.
    @discardableResult
    mutating func absorb(_ node: Node, asOf events: Int = .max) -> Int {
        let slot = slot(for: node.id)
        guard !changedAfter(events, slot: slot, id: node.id) else { return slot }
        mark(slot)
        guard var row = entries[slot].row else {
            entries[slot].row = node
            return slot
        }
        entries[slot].row = nil  // so `row` is the only reference while it changes
        row.attributes = node.attributes
        row.relationships.merge(node.relationships) { _, new in new }
        row.version = node.version ?? row.version
        row.sharedFreshness = node.sharedFreshness ?? row.sharedFreshness
        entries[slot].row = row
        return slot
    }

    /// Stores `row` as the last known row of its object, replacing any.
    mutating func setRow(_ row: Node) {
        let slot = slot(for: row.id)
        mark(slot)
        entries[slot].row = row
    }

    /// Changes the row of `id`, if there is one (and, for an answer to a request sent when the
    /// context had merged `events` events, if no later event changed it).
    mutating func updateRow(for id: ObjectID, asOf events: Int = .max, _ change: (inout Node) -> Void) {
        guard let slot = slots[id], !changedAfter(events, slot: slot, id: id), var row = entries[slot].row else {
            return
        }
        mark(slot)
        entries[slot].row = nil  // so `row` is the only reference while it changes
        change(&row)
        entries[slot].row = row
    }

    /// Forgets the row of `id`; its object, if alive, becomes a fault.
    mutating func removeRow(for id: ObjectID) {
        guard let slot = slots[id] else { return }
        mark(slot)
        entries[slot].row = nil
    }

    /// Notes that the event being merged, if any, changed the row in `slot`.
    private mutating func mark(_ slot: Int) {
        if let merging { entries[slot].changedByEvent = merging }
    }

    /// Changes every row for which `isAffected` holds.
    mutating func updateRows(where isAffected: (Node) -> Bool, with change: (inout Node) -> Void) {
        for slot in entries.indices where entries[slot].state == .current {
            guard var row = entries[slot].row, isAffected(row) else { continue }
            mark(slot)
            entries[slot].row = nil
            change(&row)
            entries[slot].row = row
        }
    }

    // MARK: Objects

    /// The object for `id`: the live one made for it, or a new one from `make` (given the slot).
    mutating func object(for id: ObjectID, make: (Int) -> ManagedObject) -> ManagedObject {
        let slot = slot(for: id)
        return object(at: slot, make: make)
    }

    /// The object in `slot` (from `absorb`), made by `make` if none is alive.
    mutating func object(at slot: Int, make: (Int) -> ManagedObject) -> ManagedObject {
        if let object = entries[slot].object.object { return object }
        let object = make(slot)
        entries[slot].object = WeakObject(object)
        objectsSinceReclaim += 1
        if objectsSinceReclaim > 1_000 && objectsSinceReclaim > slots.count {
            reclaimSlots()
        }
        return object
    }

    /// The live object made for `id`, if any.
    func registeredObject(for id: ObjectID) -> ManagedObject? {
        slots[id].flatMap { entries[$0].object.object }
    }

    /// Forgets `id` (a deleted or withdrawn object): its row is gone, and the next object for it
    /// is a new one. The object made for it so far reads by ID from now on.
    mutating func forget(_ id: ObjectID) {
        guard let slot = slots.removeValue(forKey: id) else { return }
        supersede(slot)
    }

    /// Gives `temporary`'s entry the permanent ID. When `permanent` already has an entry, the
    /// temporary's row and object win (they are what the context has been using); the other
    /// entry's object, if alive, reads by ID from now on.
    mutating func remap(_ temporary: ObjectID, to permanent: ObjectID) {
        guard let slot = slots.removeValue(forKey: temporary) else { return }
        entries[slot].id = permanent
        if let previous = slots.updateValue(slot, forKey: permanent) {
            if entries[slot].row == nil { entries[slot].row = entries[previous].row }
            supersede(previous)
        }
        updateRow(for: permanent) { $0.id = permanent }
    }

    // MARK: Slots

    /// The slot of `id`, made when it has none. One hashed lookup either way.
    private mutating func slot(for id: ObjectID) -> Int {
        var isNew = false
        let slot = withSlot(&slots[id, default: -1]) { slot in
            if slot < 0 {
                isNew = true
                slot = freeSlots.popLast() ?? entries.count
            }
            return slot
        }
        guard isNew else { return slot }
        // Made where it is stored: one made beforehand was copied into the table.
        if slot == entries.count { entries.append(Entry(id: id)) } else { entries[slot] = Entry(id: id) }
        return slot
    }

    private func withSlot<Result>(_ slot: inout Int, _ body: (inout Int) -> Result) -> Result {
        body(&slot)
    }

    private mutating func supersede(_ slot: Int) {
        entries[slot].row = nil
        entries[slot].state = .superseded
        if entries[slot].object.object == nil { free(slot) }
    }

    private mutating func free(_ slot: Int) {
        entries[slot] = Entry(id: entries[slot].id, state: .free)
        freeSlots.append(slot)
    }

    /// Reuses the slots of objects that are gone and whose entries hold no row.
    private mutating func reclaimSlots() {
        objectsSinceReclaim = 0
        for slot in entries.indices where entries[slot].row == nil && entries[slot].object.object == nil {
            switch entries[slot].state {
            case .current:
                slots.removeValue(forKey: entries[slot].id)
                free(slot)
            case .superseded: free(slot)
            case .free: continue
            }
        }
    }
}
