/// A request for the changes a backend made after a position in its change feed
/// (`StoreRequest.changes`).
public struct ChangesRequest: Sendable, Hashable, CustomStringConvertible {
    /// The position the last answer gave (`ChangeFeedPage.cursor`); `nil` asks for the feed's
    /// current position, with no changes.
    public var cursor: String?
    /// How long the backend may hold the request open until a change arrives (a long poll);
    /// `nil` answers at once.
    public var wait: Duration?
    /// Whether the answer may be a stream held open that hands on each change as it arrives
    /// (`StoreResponse.Result.changeStream`: a backend's event stream, one connection for as long
    /// as it is healthy); a backend that cannot stream answers with a page, as without it.
    public var stream: Bool

    /// A request for the changes since `cursor` (`nil`: the current position), held open for up to
    /// `wait` when nothing has changed; with `stream`, the answer may be a stream of them.
    public init(cursor: String?, wait: Duration? = nil, stream: Bool = false) {
        self.cursor = cursor
        self.wait = wait
        self.stream = stream
    }

    public var description: String {
        "changes since \(cursor.map { "'\($0)'" } ?? "now")"
            + (stream ? " (a stream, held open)" : wait.map { " (waiting up to \($0))" } ?? "")
    }
}

extension StoreRequest {
    /// Whether the backend may hold the request open until something happens (a request for
    /// changes with a wait, or one that may be answered with a stream).
    package var isLongPoll: Bool {
        if case .changes(let request) = self { request.wait != nil || request.stream } else { false }
    }
}

/// One answer of a change feed: what changed after the position asked from, in the order the
/// backend made the changes, and the position to ask from next.
public struct ChangeFeedPage: Sendable, Hashable {
    /// The changes, oldest first.
    public var changes: [FeedChange]
    /// Where the next request starts; `nil` when the backend gave none (the next request asks
    /// for the current position).
    public var cursor: String?
    /// The backend cannot answer from the position asked (it no longer keeps changes that far
    /// back): changes were missed that nobody can name.
    public var isGap: Bool
    /// Entities changed in ways the feed could not name (a change whose key could not be read):
    /// everything cached of them is forgotten.
    public var invalidatedEntities: Set<String>
    /// How long to wait before asking again after a failure, as the backend asked (an event
    /// stream's `retry` field); `nil`: the feed's own `retry-base-delay`.
    public var reconnectionTime: Duration?

    /// A page of changes with the cursor to ask from next.
    public init(
        changes: [FeedChange], cursor: String?, isGap: Bool = false, invalidatedEntities: Set<String> = [],
        reconnectionTime: Duration? = nil
    ) {
        self.changes = changes
        self.cursor = cursor
        self.isGap = isGap
        self.invalidatedEntities = invalidatedEntities
        self.reconnectionTime = reconnectionTime
    }
}

/// One change a backend reports: an object was inserted or updated (with its new state, when the
/// feed carries it) or deleted.
public struct FeedChange: Sendable, Hashable {
    /// What happened to the object.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        /// The object was created, changed, or deleted.
        case insert, update, delete
    }

    /// The object that changed.
    public var id: ObjectID
    /// What happened to it.
    public var operation: Operation
    /// The object's new state, when the feed sends the record with the change.
    public var node: Node?

    /// A change to object `id`, with its new state when the feed carries it.
    public init(_ operation: Operation, _ id: ObjectID, node: Node? = nil) {
        self.id = id
        self.operation = operation
        self.node = node
    }
}

extension ChangeFeedPage {
    /// The page as the chain's change event: caches forget what it names, observers refetch.
    /// An object changed more than once is named by its last change, with its last state.
    public func event(source: String) -> ChangeEvent {
        var event = ChangeEvent(source: source, scope: isGap ? .gap : .named)
        var last: [ObjectID: FeedChange] = [:]
        var order: [ObjectID] = []
        for change in changes {
            if last.updateValue(change, forKey: change.id) == nil { order.append(change.id) }
        }
        for id in order {
            guard let change = last[id] else { continue }
            switch change.operation {
            case .insert: event.inserted.insert(id)
            case .update: event.updated.insert(id)
            case .delete: event.deleted.insert(id)
            }
            if let node = change.node, change.operation != .delete { event.nodes.append(node) }
        }
        // Only what the changes cannot name: the caches keep a collection complete when every
        // change to it is applied in place.
        event.invalidatedEntities = invalidatedEntities
        return event
    }
}
