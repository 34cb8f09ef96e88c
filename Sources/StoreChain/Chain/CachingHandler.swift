/// A handler that keeps answers (a cache). Besides the requests passing through it, it can learn
/// of changes made elsewhere — by another process sharing its storage — and must then forget
/// what they made wrong. The chain relays such changes: every caching handler but the one that
/// learned of it forgets, and the chain's observers get the change as a `ChangeEvent`.
public protocol CachingHandler: StoreHandler, OfflineAnswering {
    /// Changes other processes made that this handler learns of (a cache whose storage several
    /// processes share hears of their saves); `nil` when it learns of none. The chain reads the
    /// stream until it shuts down.
    func changesFromElsewhere() -> AsyncStream<ChangeEvent>?

    /// Drops what this handler keeps that `change`, made elsewhere, has made wrong: the objects
    /// it names, and the queries and complete collections of its entities.
    func forget(_ change: ChangeEvent, context: RequestContext) async

    /// Takes note of `change`, which this handler heard of itself (its storage, shared with the
    /// process that made it, already holds it): what it fetched before the change must not be
    /// stored over it. The default does nothing.
    func heard(_ change: ChangeEvent)
}

extension CachingHandler {
    public func heard(_ change: ChangeEvent) {}
}

extension Chain {
    /// Relays the changes every caching handler learns of from elsewhere: the others forget
    /// what the change makes wrong, then the change is published to the chain's observers, with
    /// the saves an outbox holds shown over its records (as every read shows them). A cache
    /// above such a handler keeps the held saves over what it holds (a save acknowledged as
    /// pending left them there), so it takes the change with them shown too; a cache below it
    /// holds the backend's data and takes the change as the backend made it.
    /// Returns the relaying tasks, which end when their stream ends or when cancelled.
    static func relayChangesFromElsewhere(among handlers: [any StoreHandler], services: ChainServices)
        -> [Task<Void, Never>]
    {
        let holders = handlers.handlers(of: (any SaveHolding).self)
        let lastHolder = handlers.lastIndex { $0.unscoped(as: (any SaveHolding).self) != nil }
        let caches = handlers.indices.compactMap { index -> RelayedCache? in
            guard let cache = handlers[index].unscoped(as: (any CachingHandler).self) else { return nil }
            return RelayedCache(cache: cache, seesHeldSaves: lastHolder.map { index < $0 } ?? false)
        }
        let fromElsewhere = caches.indices.compactMap { index -> Task<Void, Never>? in
            guard let changes = caches[index].cache.changesFromElsewhere() else { return nil }
            let others = caches.indices.filter { $0 != index }.map { caches[$0] }
            return relay(changes, to: others, showing: holders, services: services) { caches[index].cache.heard($0) }
        }
        let fromFeeds = handlers.handlers(of: (any ChangeSource).self).map { source in
            Task {
                await source.follow(services: services) { change in
                    await apply(change, to: caches, showing: holders, services: services)
                }
            }
        }
        return fromElsewhere + fromFeeds
    }

    /// A cache the relay tells of changes, and whether it holds the held saves of a handler
    /// below it over its data.
    private struct RelayedCache: Sendable {
        let cache: any CachingHandler
        let seesHeldSaves: Bool
    }

    /// Has `caches` forget what `change` makes wrong, then publishes it as the app is to see it,
    /// with the saves `holders` hold over it.
    private static func apply(
        _ change: ChangeEvent, to caches: [RelayedCache], showing holders: [any SaveHolding], services: ChainServices
    ) async {
        let context = RequestContext(services: services, cachePolicy: nil, deadline: nil)
        let shown = holders.reduce(change) { $1.showingHeldSaves($0) }
        for relayed in caches { await relayed.cache.forget(relayed.seesHeldSaves ? shown : change, context: context) }
        services.events.publish(shown)
    }

    /// Reads `changes` until it ends or the task is cancelled: `caches` forget what each change
    /// makes wrong (after `heard`), then it is published.
    private static func relay(
        _ changes: AsyncStream<ChangeEvent>, to caches: [RelayedCache], showing holders: [any SaveHolding],
        services: ChainServices, heard: @escaping @Sendable (ChangeEvent) -> Void = { _ in }
    ) -> Task<Void, Never> {
        Task {
            for await change in changes {
                heard(change)
                await apply(change, to: caches, showing: holders, services: services)
            }
        }
    }
}
