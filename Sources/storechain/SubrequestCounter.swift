import StoreChain

/// A pass-through handler, first in the chain, that counts the sub-requests a request caused
/// (the related objects and lists it needed) and how many of them caches answered, for
/// `query --stats`.
final class SubrequestCounter: StoreHandler {
    let name = "stats"
    private let counts = Locked((sent: 0, fromCaches: 0))

    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        let response = try await next(request, context)
        if !context.lineage.isEmpty {
            let cached = response.info.origin == .memory || response.info.origin == .disk
            counts.withLock { counts in
                counts.sent += 1
                if cached { counts.fromCaches += 1 }
            }
        }
        return response
    }

    /// Sub-requests sent so far, and how many caches answered.
    var totals: (sent: Int, fromCaches: Int) {
        counts.withLock { $0 }
    }
}
