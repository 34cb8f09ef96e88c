/// Objects this process saved that no change feed has told back yet, with the version each save
/// gave. A feed tells changes in the order the backend made them, this process's own saves among
/// them, and may tell them late: a record of such an object told before the save itself (another
/// version) is older than what the save stored, so a cache must not take it in place of it.
///
/// Kept with the order of saves (`SaveOrder.untold`), so every cache handler over one storage
/// sees the same. At most `capacity` objects are remembered (with no feed, nothing is ever told
/// back); when full, all are dropped.
package final class UntoldSaves: Sendable {
    private let saved = Locked<[ObjectID: String?]>([:])
    private let capacity: Int

    package init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// A save stored these objects, at these versions (`nil`: the backend gave none).
    package func stored(_ versions: [ObjectID: String?]) {
        guard !versions.isEmpty else { return }
        saved.withLock { saved in
            if saved.count + versions.count > capacity { saved.removeAll(keepingCapacity: true) }
            saved.merge(versions) { _, new in new }
        }
    }

    /// Whether `record`, told by a change from elsewhere, may be older than what a save of this
    /// process stored: it names an object saved here that has not been told back, at another
    /// version. The save told back (its version) ends the wait. Where the save gave no version,
    /// the first record told cannot be told apart from the save's own: it counts as older, once.
    package func mayBeOlder(_ record: Node) -> Bool {
        saved.withLock { saved in
            guard let entry = saved[record.id] else { return false }
            guard let version = entry else {
                saved[record.id] = nil
                return true
            }
            if version == record.version {
                saved[record.id] = nil
                return false
            }
            return true
        }
    }
}
