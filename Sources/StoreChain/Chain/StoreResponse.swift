/// The answer to a `StoreRequest`, with what the chain learned on the way.
public struct StoreResponse: Sendable, Hashable {
    /// What a request was answered with.
    public enum Result: Sendable, Hashable {
        /// A fetch's objects, IDs, count or dictionaries.
        case fetched(FetchResult)
        /// The object's node, or `nil` when it no longer exists.
        case object(Node?)
        /// A relationship's destination IDs.
        case relationship(RelationshipValue)
        /// What a save did (permanent IDs, new versions, what is still pending).
        case saved(SaveResult)
        /// A change feed's page of changes and its next cursor.
        case changes(ChangeFeedPage)
        /// A change feed held open: its pages as they arrive (asked for with
        /// `ChangesRequest.stream`).
        case changeStream(ChangeStream)
    }

    /// The answer itself.
    public var result: Result
    /// Other objects learned while answering: prefetched relationships, the destinations of a
    /// relationship fault, embedded objects.
    public var related: [Node]
    /// Facts about the answer: who gave it, how fresh it is, what was applied.
    public var info: ResponseInfo

    /// An answer with its facts, and the other objects learned while answering.
    public init(_ result: Result, related: [Node] = [], info: ResponseInfo) {
        self.result = result
        self.related = related
        self.info = info
    }

    /// The fetch result, or an error saying the response answered something else.
    public func fetchResult() throws(StoreChainError) -> FetchResult {
        guard case .fetched(let result) = result else { throw mismatch("a fetch result") }
        return result
    }

    /// The objects a fetch of objects answered, or an error naming `request` when the response
    /// holds something else.
    package func fetchedObjects(for request: FetchRequest) throws(StoreChainError) -> [Node] {
        guard case .objects(let nodes) = try fetchResult() else {
            throw StoreChainError(
                .invalidResponse, "\(info.answeredBy) answered \(request) without objects",
                suggestion: "a handler answers a fetch of objects with objects")
        }
        return nodes
    }

    /// The object's node (`nil` when it no longer exists), or an error saying the response
    /// answered something else.
    public func objectNode() throws(StoreChainError) -> Node? {
        guard case .object(let node) = result else { throw mismatch("an object") }
        return node
    }

    /// The relationship's value, or an error saying the response answered something else.
    public func relationshipValue() throws(StoreChainError) -> RelationshipValue {
        guard case .relationship(let value) = result else { throw mismatch("a relationship value") }
        return value
    }

    /// The save's result, or an error saying the response answered something else.
    public func saveResult() throws(StoreChainError) -> SaveResult {
        guard case .saved(let result) = result else { throw mismatch("a save result") }
        return result
    }

    /// The change feed's page, or an error saying the response answered something else.
    public func changeFeedPage() throws(StoreChainError) -> ChangeFeedPage {
        guard case .changes(let page) = result else { throw mismatch("changes") }
        return page
    }

    private func mismatch(_ expected: String) -> StoreChainError {
        StoreChainError(
            .invalidResponse, "'\(info.answeredBy)' answered with \(result.kindDescription), not \(expected)",
            suggestion: "a handler must answer each request with the matching kind of response")
    }
}

extension StoreResponse.Result {
    var kindDescription: String {
        switch self {
        case .fetched: "a fetch result"
        case .object: "an object"
        case .relationship: "a relationship value"
        case .saved: "a save result"
        case .changes: "changes"
        case .changeStream: "a stream of changes"
        }
    }
}

/// What a cache did with a request.
public enum CacheStatus: String, Sendable, Hashable, CaseIterable {
    /// Answered from fresh cached data.
    case hit
    /// Not cached (or the policy said reload): forwarded, and the answer stored.
    case miss
    /// Answered from stale data (cache-only, stale-while-revalidate, stale-if-error).
    case stale
    /// Stale data the backend confirmed unchanged ("not modified").
    case revalidated
    /// Stale data replaced by the backend's new answer.
    case refreshed
    /// Not looked up (the `reload` policy, or a request the cache cannot keep): forwarded, and
    /// the answer stored when it can be.
    case bypassed
}

/// A typed key for a fact a custom handler adds to `ResponseInfo.facts`.
///
/// ```swift
/// enum ShardKey: ResponseFactKey { typealias Value = String }
/// response.info.facts[ShardKey.self] = "eu-1"
/// ```
public protocol ResponseFactKey {
    /// The type of the fact stored under this key.
    associatedtype Value: Sendable & Hashable
}

/// Facts custom handlers add to a response, by typed key.
public struct ResponseFacts: Sendable, Hashable {
    private var values: [ObjectIdentifier: any Sendable & Hashable] = [:]

    /// No facts.
    public init() {}

    /// The fact stored under `key`, if any.
    public subscript<Key: ResponseFactKey>(key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    public static func == (lhs: ResponseFacts, rhs: ResponseFacts) -> Bool {
        lhs.values.count == rhs.values.count
            && lhs.values.allSatisfy { key, value in
                rhs.values[key].map { AnyHashable(value) == AnyHashable($0) } ?? false
            }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(values.count)
    }
}
