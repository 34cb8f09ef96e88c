import Foundation
import StoreChain

/// The network between an outbox and the backend in the object-graph test: while down, every
/// request fails at once, as a refused connection does.
final class GraphNetwork: StoreHandler, Sendable {
    let name = "network"
    private let down = Locked(false)

    var isDown: Bool {
        get { down.withLock { $0 } }
        set { down.withLock { $0 = newValue } }
    }

    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws -> StoreResponse {
        if isDown {
            throw StoreChainError(
                .transport, "connection refused (the object-graph test took the backend down)",
                suggestion: "the test brings it back with a go-online step")
        }
        return try await next(request, context)
    }
}
