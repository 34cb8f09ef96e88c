/// What changed: objects inserted, updated, deleted, and entities whose cached queries are no
/// longer valid. Observers re-run the queries an event touches.
///
/// What produced it says which parts it sets: a save or a change told from elsewhere names the
/// objects (and brings their state when known); an outbox tells what became of the saves it held
/// (`outbox`); a change feed that lost track says how far what is cached may be out of date
/// (`scope`).
public struct ChangeEvent: Sendable, Hashable {
    /// How much of what changed the event names.
    public enum Scope: Sendable, Hashable {
        /// It names what changed (its objects and entities).
        case named
        /// Changes were made that the event cannot name (the connection that tells of them was
        /// down for a while): anything cached may be out of date, so caches forget what they hold
        /// and every observation refetches.
        case gap
        /// What is cached may be out of date, though nothing is known to have changed (a change
        /// feed stayed down longer than its `max-outage`): caches keep what they hold but make it
        /// stale, so it is revalidated before use (and served stale only where allowed, as on an
        /// error), and every observation refetches.
        case stale
    }

    /// Objects created.
    public var inserted: Set<ObjectID>
    /// Objects whose values or relationships changed.
    public var updated: Set<ObjectID>
    /// Objects that no longer exist.
    public var deleted: Set<ObjectID>
    /// Entities whose query results may have changed.
    public var invalidatedEntities: Set<String>
    /// The new state of inserted and updated objects, when known.
    public var nodes: [Node]
    /// Temporary → permanent IDs, when the event comes from a save.
    public var permanentIDs: [ObjectID: ObjectID]
    /// Who published it (a handler's type name, or "save").
    public var source: String
    /// What became of the saves an outbox held; empty for an event no outbox published.
    public var outbox: OutboxOutcome
    /// How much of what changed the event names.
    public var scope: Scope

    /// An event with the given changes; every part is empty unless given.
    public init(
        inserted: Set<ObjectID> = [], updated: Set<ObjectID> = [], deleted: Set<ObjectID> = [],
        invalidatedEntities: Set<String> = [], nodes: [Node] = [], permanentIDs: [ObjectID: ObjectID] = [:],
        source: String, outbox: OutboxOutcome = OutboxOutcome(), scope: Scope = .named
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.invalidatedEntities = invalidatedEntities
        self.nodes = nodes
        self.permanentIDs = permanentIDs
        self.source = source
        self.outbox = outbox
        self.scope = scope
    }

    /// Whether changes were made that the event cannot name (`Scope.gap`).
    public var isGap: Bool { scope == .gap }
    /// Whether what is cached is to be made stale (`Scope.stale`).
    public var marksStale: Bool { scope == .stale }

    /// Every entity the event touches.
    public var entities: Set<String> {
        invalidatedEntities.union(inserted.map(\.entity)).union(updated.map(\.entity)).union(deleted.map(\.entity))
            .union(outbox.rejected.map(\.entity))
    }
}

/// What became of saves an outbox held (acknowledged while the backend could not be reached), as
/// a `ChangeEvent` tells it.
public struct OutboxOutcome: Sendable, Hashable {
    /// Objects whose pending changes have now reached the backend, under their permanent IDs.
    public var sent: Set<ObjectID>
    /// Objects whose pending changes the backend refused for good: what the app saw of them
    /// optimistically is withdrawn (inserted objects are gone, the others read again).
    public var rejected: Set<ObjectID>
    /// Why the backend refused the `rejected` changes: its error, as text.
    public var rejection: String?
    /// Objects whose pending update met a conflict (someone else changed them first), with the
    /// policy that settled it; the event's `nodes` hold the backend's current objects.
    public var resolved: [ObjectID: ConflictPolicy]
    /// The updates of a save the outbox holds, as sent: the attributes and relationships each
    /// sets, not the whole object (the event's `nodes` have no state for them until they reach
    /// the backend).
    public var unsentUpdates: [Node]

    /// An outcome with the given parts; every part is empty unless given.
    public init(
        sent: Set<ObjectID> = [], rejected: Set<ObjectID> = [], rejection: String? = nil,
        resolved: [ObjectID: ConflictPolicy] = [:], unsentUpdates: [Node] = []
    ) {
        self.sent = sent
        self.rejected = rejected
        self.rejection = rejection
        self.resolved = resolved
        self.unsentUpdates = unsentUpdates
    }
}
