/// A handler that tells its chain of changes the backend made (a change feed). The chain has
/// every caching handler forget what each change makes wrong, then publishes it to its contexts
/// and observations, as it does with a shared cache's changes from other processes.
public protocol ChangeSource: StoreHandler {
    /// Follows the backend's changes from the moment the chain is built until the task is
    /// cancelled (the chain shuts down), handing each to `apply`, which returns once the caches
    /// have forgotten what it makes wrong and it is published: a source asks for more only then,
    /// so a burst of changes never piles up in memory. `services` are the chain's, so the source
    /// can send its own requests through the whole chain.
    func follow(services: ChainServices, apply: @escaping @Sendable (ChangeEvent) async -> Void) async
}
