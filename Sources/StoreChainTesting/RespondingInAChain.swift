import StoreChain

extension StoreResponder {
    /// Sends `request` to this terminal the way an app does: through a chain whose terminal it is,
    /// with no handlers of its own (the chain places a pager above a terminal whose listings come
    /// in pages, and takes the requests reading related objects sends). `context`'s clock,
    /// logger, cache policy, deadline and values are kept. For a terminal's tests, since a
    /// terminal answers a whole fetch only inside a chain.
    ///
    /// ```swift
    /// let bands = try await remote.respondInAChain(to: .fetch(FetchRequest(entity: "Band")))
    /// ```
    public func respondInAChain(to request: StoreRequest, context: RequestContext = RequestContext()) async throws
        -> StoreResponse
    {
        let chain = Chain(handlers: [], terminal: self, clock: context.clock, logger: context.logger, tracing: nil)
        return try await chain.send(request, context: context.moved(to: chain))
    }
}
