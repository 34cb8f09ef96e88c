import StoreChain

/// An update or delete the backend refused on replay because the object changed since the
/// version it was based on, for a resolver the app registered by name
/// (`OutboxHandler(model:options:resolvers:)`, `conflict-policy: NAME`).
public struct OutboxConflict: Sendable {
    /// The outbox entry of the save.
    public let entry: Int64
    /// The update as the app saved it (for a delete, the object's ID with no values); its
    /// `version` is the one it was based on.
    public let local: Node
    /// The backend's current object (with later waiting saves applied), `nil` when it was
    /// deleted meanwhile.
    public let server: Node?
    /// Whether the app deleted the object: `.send(node)` then deletes it based on
    /// `node.version` (`nil`: unconditionally).
    public let isDelete: Bool
}

/// What a resolver decides.
public enum ConflictDecision: Sendable, Hashable {
    /// Drop the local change (or delete).
    case keepServer
    /// Send this update instead (same object; its `version` is the one it is based on, `nil`
    /// for an unconditional update).
    case send(Node)
}

/// Settles a conflict; a resolver that throws leaves the save failed, with its error.
public typealias ConflictResolver = @Sendable (OutboxConflict) async throws -> ConflictDecision
