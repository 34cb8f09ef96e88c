import StoreChain

/// A pass-through handler that counts the requests going by, for the demo's traffic figures.
final class RequestCounter: StoreHandler {
    private let counts = Locked<[StoreRequest.Kind: Int]>([:])

    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        counts.withLock { $0[request.kind, default: 0] += 1 }
        return try await next(request, context)
    }

    /// The requests counted by kind since the last call, in kind order; resets the counts.
    func take() -> [(kind: String, count: Int)] {
        counts.withLock { counts in
            defer { counts.removeAll() }
            return counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, $0.value) }
        }
    }
}
