/// Objects an `ObjectContext` handed out together as faults (the members of a relationship), so
/// firing one fault can load its neighbours in the same round trip, the way Core Data faults in
/// batches.
struct FaultGroups {
    /// One list of objects handed out together, shared by its members.
    final class Group: Sendable {
        let ids: [ObjectID]

        init(_ ids: [ObjectID]) {
            self.ids = ids
        }
    }

    private var membership: [ObjectID: (group: Group, index: Int)] = [:]

    /// Remembers `ids` as a group; members already in a group move to this one.
    mutating func register(_ ids: [ObjectID]) {
        guard ids.count > 1 else { return }
        let group = Group(ids)
        for (index, id) in ids.enumerated() { membership[id] = (group, index) }
    }

    /// Forgets an object that is no longer a fault.
    mutating func remove(_ id: ObjectID) {
        // Most objects never were faults: no hashing for them while no group is held.
        guard !membership.isEmpty else { return }
        membership[id] = nil
    }

    /// `id` and up to `size - 1` neighbours after it (then before it) of the same entity for
    /// which `isFault` holds.
    func batch(for id: ObjectID, size: Int, isFault: (ObjectID) -> Bool) -> [ObjectID] {
        guard size > 1, let (group, index) = membership[id] else { return [id] }
        var batch = [id]
        for range in [(index + 1)..<group.ids.count, 0..<index] {
            for candidate in group.ids[range] where candidate.entity == id.entity && isFault(candidate) {
                batch.append(candidate)
                if batch.count == size { return batch }
            }
        }
        return batch
    }
}
