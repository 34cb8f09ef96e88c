/// What the chain read while its change feed did not yet know where the backend's changes stood
/// (before its first answer, or after a gap that gave no new position).
///
/// A change made between such a read and the feed's first position is in no answer the feed
/// will give: the position it learns is already past it. So once the feed knows its position,
/// what was read before is announced as possibly changed (`event(source:)`): caches forget those
/// objects and the queries over those entities, and observers of them refetch. Without this, an
/// observer that started with the chain could keep showing the value from before such a change
/// for as long as nothing else changed (the change-delivery benchmark hung on it in CI).
struct ReadsBeforePosition: Sendable {
    /// Past this many objects, the event makes everything cached stale instead of naming them.
    static let objectLimit = 1_000

    private(set) var entities: Set<String> = []
    private(set) var objects: Set<ObjectID> = []
    /// More objects were read than `objectLimit`.
    private(set) var overflowed = false

    /// Whether `request` reads what a change on the backend could make out of date.
    static func reads(_ request: StoreRequest) -> Bool {
        switch request {
        case .fetch, .objectFault, .relationshipFault, .page, .relationshipPage, .revalidation: true
        case .save, .changes: false
        }
    }

    mutating func record(_ request: StoreRequest) {
        entities.formUnion(request.entities)
        if case .objectFault(let id) = request { insert([id]) }
    }

    mutating func record(_ response: StoreResponse) {
        insert(Self.objectIDs(in: response))
    }

    /// What to announce once the feed knows its position: nothing when nothing was read.
    func event(source: String) -> ChangeEvent? {
        if overflowed { return ChangeEvent(source: source, scope: .stale) }
        guard !entities.isEmpty || !objects.isEmpty else { return nil }
        return ChangeEvent(updated: objects, invalidatedEntities: entities, source: source)
    }

    private mutating func insert(_ ids: some Sequence<ObjectID>) {
        guard !overflowed else { return }
        objects.formUnion(ids)
        if objects.count > Self.objectLimit {
            overflowed = true
            objects = []
        }
    }

    private static func objectIDs(in response: StoreResponse) -> [ObjectID] {
        var ids = response.related.map(\.id)
        switch response.result {
        case .fetched(.objects(let nodes)): ids += nodes.map(\.id)
        case .fetched(.objectIDs(let found)): ids += found
        case .object(let node?): ids.append(node.id)
        case .relationship(let value): ids += value.objectIDs
        case .fetched(.count), .fetched(.dictionaries), .object(nil), .saved, .changes, .changeStream: break
        }
        return ids
    }
}
