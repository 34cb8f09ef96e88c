/// A handler that holds work for the backend it could not send yet (an outbox's pending saves)
/// and sends it when asked: `Chain.sync()` and `ObjectContext.sync()` ask every one in the chain.
public protocol SyncingHandler: StoreHandler {
    /// Sends what is pending, in order, as far as the backend lets it.
    ///
    /// - Returns: how many items are still pending afterwards (the backend is still out of
    ///   reach); items the backend refused for good are not counted.
    func sync(context: RequestContext) async throws -> Int
}

/// A handler that keeps saves until the backend has them (an outbox), and lets the app see and
/// settle them: `storechain outbox list|retry|discard` and an app's own screens find it with
/// `chain.handlers(of: (any SaveHolding).self)`.
public protocol SaveHolding: SyncingHandler, OfflineAnswering {
    /// Every save held, oldest first.
    func entries() async throws -> [OutboxEntry]
    /// Forgets a save, whatever its state: it will never be sent.
    func discard(_ id: Int64) async throws
    /// Marks a failed save pending again, to be sent with the next ones.
    func retry(_ id: Int64) async throws
    /// `change`, made elsewhere (a change feed's, another process's), as the app is to see it
    /// while saves are held: the objects' states it carries with the held saves applied over
    /// them, as reads show them (a track a held save moved away is not in its old album's
    /// `tracks`, whatever the backend's record says). The chain publishes what this returns.
    func showingHeldSaves(_ change: ChangeEvent) -> ChangeEvent
}

extension Chain {
    /// Asks every handler holding pending work (an outbox) to send it now.
    ///
    /// - Returns: how many items are still pending afterwards, in all.
    @discardableResult
    public func sync() async throws -> Int {
        var remaining = 0
        for syncing in handlers(of: (any SyncingHandler).self) {
            remaining += try await syncing.sync(context: makeContext())
        }
        return remaining
    }
}
