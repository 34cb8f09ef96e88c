import Foundation
import StoreChain

/// One save an outbox holds until the backend has it.
public struct OutboxEntry: Sendable, Hashable, Identifiable {
    /// Where the entry stands.
    public enum State: String, Sendable, Hashable {
        /// Waiting to be sent (again): the backend could not be reached, or an earlier entry
        /// has not been sent yet.
        case pending
        /// The backend refused it for good (or refused a save it depends on); kept for the app
        /// to inspect, retry or discard, never sent again on its own.
        case failed
    }

    /// Its place in the outbox: entries are sent in this order.
    public let id: Int64
    /// The save, with the idempotency key it is always sent with.
    public var changes: SaveChanges
    public var state: State
    /// How many times it was sent without an answer that settled it.
    public var attempts: Int
    /// What the last attempt met, when it failed.
    public var lastError: String?
    /// When the save was made.
    public let created: Date

    /// The objects the save changes.
    public var objectIDs: [ObjectID] { changes.objectIDs }

    /// What the save does: `insert`, `update`, `delete`, or several joined by `+`.
    public var kind: String {
        let kinds = [
            changes.inserted.isEmpty ? nil : "insert", changes.updated.isEmpty ? nil : "update",
            changes.deleted.isEmpty ? nil : "delete",
        ]
        return kinds.compactMap { $0 }.joined(separator: "+")
    }

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
