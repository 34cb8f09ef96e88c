import Foundation
import StoreChain

extension OutboxEntry {
    /// Whether the save mentions any of `ids` (as an object it changes or as a relationship's
    /// target).
    func mentions(_ ids: Set<ObjectID>) -> Bool {
        guard !ids.isEmpty else { return false }
        if changes.deleted.contains(where: ids.contains) { return true }
        return (changes.inserted + changes.updated).contains { node in
            ids.contains(node.id) || node.relationships.values.contains { $0.objectIDs.contains(where: ids.contains) }
        }
    }
}

/// A version of an object the outbox's own save replaced: later waiting updates based on `from`
/// are based on `to` now (no one else changed the object in between).
struct VersionChange: Sendable, Hashable {
    let from: String
    let to: String
}

extension SaveChanges {
    /// The same save with its updates and deletes based on the versions the outbox's earlier
    /// saves made.
    func rebasing(_ versions: [ObjectID: VersionChange]) -> SaveChanges {
        guard !versions.isEmpty else { return self }
        var copy = self
        for index in copy.updated.indices {
            guard let change = versions[copy.updated[index].id], copy.updated[index].version == change.from else {
                continue
            }
            copy.updated[index].version = change.to
        }
        for (id, version) in copy.deletedVersions {
            if let change = versions[id], version == change.from { copy.deletedVersions[id] = change.to }
        }
        return copy
    }
}
