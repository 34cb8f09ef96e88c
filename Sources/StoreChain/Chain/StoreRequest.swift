/// A request that passes down the chain. Each mirrors one of `NSIncrementalStore`'s entry points.
///
/// The kinds with large payloads (fetches, pages) are held out of line, so that a fault, the
/// commonest request, copies a small value at every hop.
public enum StoreRequest: Sendable, Hashable, CustomStringConvertible {
    /// Objects, IDs, a count or dictionaries for a fetch request.
    indirect case fetch(FetchRequest)
    /// The current values of one object; answered with `nil` when the object no longer exists.
    case objectFault(ObjectID)
    /// The object(s) a relationship of one object holds.
    case relationshipFault(ObjectID, relationship: String)
    /// Inserted, updated and deleted objects, saved together.
    case save(SaveChanges)
    /// One backend page of a fetch's listing, which a pager (`PaginationHandler`) asks for.
    /// Answered with the page's records that match the fetch's whole predicate, in the
    /// backend's order, and `ResponseInfo.page` describing the page; a responder that cannot
    /// page answers the whole fetch (with no `page`).
    indirect case page(FetchRequest, PageRequest)
    /// One backend page of a relationship's own list (`GET /albums/{id}/tracks`), which a pager
    /// (`PaginationHandler`) asks for to answer a relationship fault. Answered with the page's objects as
    /// `.relationship` (in the backend's order) and `ResponseInfo.page` saying where the next
    /// page is; a responder that cannot page answers the whole relationship (with no `page`).
    indirect case relationshipPage(ObjectID, relationship: String, PageRequest)
    /// A fetch or object fault that a cache sends to ask whether the answer it holds, which
    /// came with these validators, is still current. Answered "not modified"
    /// (`ResponseInfo.notModified`, no result) or with the request's full answer; a responder
    /// that cannot revalidate answers the request itself.
    indirect case revalidation(StoreRequest, Validators)
    /// The changes the backend made since a position in its change feed, which a
    /// `ChangeFeedHandler` asks for. Answered with `.changes`: what changed, in order, and the
    /// position to ask from next; a responder with no change feed throws `.noEndpoint`.
    case changes(ChangesRequest)

    /// The kind of a request, for scoping handlers and for logs.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A fetch request.
        case fetch
        /// One object's values.
        case objectFault = "object-fault"
        /// One relationship's destinations.
        case relationshipFault = "relationship-fault"
        /// A save of changes.
        case save
        /// One page of a fetch's listing.
        case page
        /// One page of a relationship's destinations.
        case relationshipPage = "relationship-page"
        /// A conditional request for something cached (with its validators).
        case revalidation
        /// A change feed's request for what changed since a cursor.
        case changes
    }

    /// The request's kind.
    public var kind: Kind {
        switch self {
        case .fetch: .fetch
        case .objectFault: .objectFault
        case .relationshipFault: .relationshipFault
        case .save: .save
        case .page: .page
        case .relationshipPage: .relationshipPage
        case .revalidation: .revalidation
        case .changes: .changes
        }
    }

    /// The request a revalidation asks about; any other request itself.
    public var unconditional: StoreRequest {
        if case .revalidation(let request, _) = self { request.unconditional } else { self }
    }

    /// The entities the request is about.
    public var entities: Set<String> {
        switch self {
        case .fetch(let request), .page(let request, _): [request.entity]
        case .objectFault(let id), .relationshipFault(let id, _), .relationshipPage(let id, _, _): [id.entity]
        case .save(let changes): changes.entities
        case .revalidation(let request, _): request.entities
        case .changes: []
        }
    }

    public var description: String {
        switch self {
        case .fetch(let request): "fetch \(request)"
        case .objectFault(let id): "object-fault \(id)"
        case .relationshipFault(let id, let name): "relationship-fault \(id).\(name)"
        case .save(let changes): "save \(changes)"
        case .page(let request, let page): "page \(page) of fetch \(request)"
        case .relationshipPage(let id, let name, let page): "page \(page) of relationship \(id).\(name)"
        case .revalidation(let request, let validators): "\(request) if changed since \(validators)"
        case .changes(let request): "\(request)"
        }
    }
}

/// Everything a save sends: inserted objects (with temporary IDs), updated objects (only the
/// changed attributes and relationships; an explicit `null` clears a value), deleted objects.
///
/// It is `Codable` (nodes with their IDs, temporary ones too), so an outbox can keep it until it
/// can be sent.
public struct SaveChanges: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Objects to create, with temporary IDs (or keys the app chose).
    public var inserted: [Node]
    /// Objects to update: only the attributes and relationships that changed, with the version
    /// the change is based on when known.
    public var updated: [Node]
    /// Objects to delete.
    public var deleted: [ObjectID]
    /// The version each deleted object was based on, when known (as `Node.version` is for an
    /// update): the backend refuses the delete (412 to `If-Match`, or 409) when someone else
    /// changed the object since.
    public var deletedVersions: [ObjectID: String]
    /// What the backend recognises a repeat of this save by (an outbox sets it, and the remote
    /// adapter sends it as an `Idempotency-Key` header), so sending it again never saves twice;
    /// `nil` for a save sent once.
    public var idempotencyKey: String?

    /// Changes to save; each part is empty unless given.
    public init(
        inserted: [Node] = [], updated: [Node] = [], deleted: [ObjectID] = [],
        deletedVersions: [ObjectID: String] = [:], idempotencyKey: String? = nil
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.deletedVersions = deletedVersions
        self.idempotencyKey = idempotencyKey
    }

    private enum CodingKeys: String, CodingKey {
        case inserted, updated, deleted, deletedVersions, idempotencyKey
    }

    /// Reads a save as `encode(to:)` writes it; one written before deletes carried versions
    /// reads with none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        inserted = try container.decode([Node].self, forKey: .inserted)
        updated = try container.decode([Node].self, forKey: .updated)
        deleted = try container.decode([ObjectID].self, forKey: .deleted)
        deletedVersions = try container.decodeIfPresent([ObjectID: String].self, forKey: .deletedVersions) ?? [:]
        idempotencyKey = try container.decodeIfPresent(String.self, forKey: .idempotencyKey)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(inserted, forKey: .inserted)
        try container.encode(updated, forKey: .updated)
        try container.encode(deleted, forKey: .deleted)
        if !deletedVersions.isEmpty { try container.encode(deletedVersions, forKey: .deletedVersions) }
        try container.encodeIfPresent(idempotencyKey, forKey: .idempotencyKey)
    }

    /// Whether there is nothing to save.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Every entity the changes touch.
    public var entities: Set<String> {
        Set(inserted.map(\.id.entity) + updated.map(\.id.entity) + deleted.map(\.entity))
    }

    public var description: String {
        "\(inserted.count) inserted, \(updated.count) updated, \(deleted.count) deleted"
    }

    /// Every object the save changes.
    public var objectIDs: [ObjectID] { inserted.map(\.id) + updated.map(\.id) + deleted }

    /// The same save with temporary IDs replaced by the permanent ones the backend gave them
    /// (objects inserted by an earlier save that was still pending when this one was made).
    package func remapping(_ permanentIDs: [ObjectID: ObjectID]) -> SaveChanges {
        guard !permanentIDs.isEmpty else { return self }
        var copy = self
        copy.inserted = inserted.map { $0.remapping(permanentIDs) }
        copy.updated = updated.map { $0.remapping(permanentIDs) }
        copy.deleted = deleted.map { permanentIDs[$0] ?? $0 }
        copy.deletedVersions = Dictionary(
            deletedVersions.map { (permanentIDs[$0] ?? $0, $1) }, uniquingKeysWith: { first, _ in first })
        return copy
    }
}

/// What a save returns: the permanent ID of each inserted object, and the saved values as the
/// backend now holds them (server-assigned keys, versions, defaults).
public struct SaveResult: Sendable, Hashable {
    /// Temporary ID → permanent ID, for every inserted object.
    public var permanentIDs: [ObjectID: ObjectID]
    /// The saved objects' current state, under their permanent IDs.
    public var nodes: [Node]
    /// The objects the save deleted.
    public var deleted: [ObjectID]
    /// The objects whose changes are recorded but have not reached the backend yet: an outbox
    /// acknowledged the save while the backend could not be reached, and replays it later.
    /// Empty when the save is complete.
    public var pending: Set<ObjectID>

    /// A save's result as the backend gave it.
    public init(
        permanentIDs: [ObjectID: ObjectID] = [:], nodes: [Node] = [], deleted: [ObjectID] = [],
        pending: Set<ObjectID> = []
    ) {
        self.permanentIDs = permanentIDs
        self.nodes = nodes
        self.deleted = deleted
        self.pending = pending
    }

    /// Whether some of the save's changes have not reached the backend yet.
    public var isPending: Bool { !pending.isEmpty }
}
