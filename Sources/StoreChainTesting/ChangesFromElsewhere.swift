import StoreChain

/// A handler that tells its chain of changes other processes made, as a cache whose storage
/// processes share hears of them (a PostgreSQL cache's notices: IDs and entities, no values).
/// The chain relays each to its other caches, which forget what it names, and publishes it to
/// its contexts and observations. It forwards every request unchanged.
public final class ChangesFromElsewhere: CachingHandler {
    public let name = "changes-from-elsewhere"
    private let changes = AsyncStream<ChangeEvent>.makeStream()

    /// A source that has told nothing yet.
    public init() {}

    /// Tells the chain of `change`, as if another process had just saved it.
    public func tell(_ change: ChangeEvent) { changes.continuation.yield(change) }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        try await next(request, context)
    }

    public func changesFromElsewhere() -> AsyncStream<ChangeEvent>? { changes.stream }

    /// Nothing to forget: it keeps nothing.
    public func forget(_ change: ChangeEvent, context: RequestContext) async {}
}
