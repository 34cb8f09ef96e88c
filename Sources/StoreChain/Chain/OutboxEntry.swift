import Foundation

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
    /// Whether it waits, is being sent, or failed for good.
    public var state: State
    /// How many times it was sent without an answer that settled it.
    public var attempts: Int
    /// What the last attempt met, when it failed.
    public var lastError: String?
    /// When the save was made.
    public let created: Date

    /// An entry as the outbox file holds it.
    public init(
        id: Int64, changes: SaveChanges, state: State = .pending, attempts: Int = 0, lastError: String? = nil,
        created: Date
    ) {
        self.id = id
        self.changes = changes
        self.state = state
        self.attempts = attempts
        self.lastError = lastError
        self.created = created
    }

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
}
