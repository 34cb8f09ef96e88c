/// A terminal that says how its backend reads what a fetch's key paths need, so the query engine
/// (`RelatedLoader`, in the core) loads related objects the cheapest way the backend allows: a
/// batch of keys, one request per key, one per owner, or the destination's whole listing when
/// that costs fewer requests (its size learned from what the pages of its listing state,
/// `PageInfo.total`). A terminal that does not conform gets the plain way: a relationship
/// its records leave out is read as a relationship fault, related objects as one fetch by their
/// keys per hop; both are requests through the chain, so the caches answer what they hold.
///
/// ```swift
/// extension MyTerminal: BackendReads {
///     func relationshipSource(_ relationship: String, of entity: String) -> RelationshipSource {
///         relationship == "albums" ? .ownRequest("from GET /bands/{id}/albums") : .keyInRecord("as '\(relationship)_id'")
///     }
///     func pushesDown(_ predicate: FetchPredicate, of entity: String) throws -> Bool { true }
///     func listingPaging(of entity: String) throws -> ListingPaging { .pages(size: 100) }
///     func readsObjectsByKey(of entity: String) -> Bool { true }
/// }
/// ```
public protocol BackendReads: StoreResponder {
    /// How `entity`'s records carry its relationship `relationship`.
    func relationshipSource(_ relationship: String, of entity: String) -> RelationshipSource

    /// Whether the backend applies some of `predicate` when reading `entity`'s objects by it
    /// (`false`: it reads the whole listing, and the predicate is applied here). Throws, saying
    /// why, when nothing the backend offers reads `entity`'s objects by it.
    func pushesDown(_ predicate: FetchPredicate, of entity: String) throws -> Bool

    /// How `entity`'s whole, unfiltered listing comes: one document, or pages of a known size.
    func listingPaging(of entity: String) throws -> ListingPaging

    /// Whether one object of `entity` can be read again by its key (an object fault), for a
    /// relationship a listing's records left out.
    func readsObjectsByKey(of entity: String) -> Bool
}

/// How a record carries one of its relationships; the text says how, for messages ("as the
/// foreign key 'band_id'").
public enum RelationshipSource: Sendable, Hashable {
    /// The record names the related objects by key (a foreign key, a link).
    case keyInRecord(String)
    /// The record holds the related records themselves.
    case embedded(String)
    /// A request of its own reads it (a relationship fault), such as `GET /bands/{id}/albums`.
    case ownRequest(String)
    /// The backend has no way to read it.
    case unmapped

    /// How it is carried, for messages.
    var described: String {
        switch self {
        case .keyInRecord(let text), .embedded(let text), .ownRequest(let text): text
        case .unmapped: "not at all"
        }
    }
}

/// How an entity's whole, unfiltered listing comes.
public enum ListingPaging: Sendable, Hashable {
    /// One document holds it.
    case unpaged
    /// Pages of `size` records.
    case pages(size: Int)
    /// Pages whose size the backend does not state (it links each to the next).
    case sizeNotStated
}
