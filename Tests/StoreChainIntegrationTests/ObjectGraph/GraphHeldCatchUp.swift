import StoreChain
import StoreChainTesting

/// Below a change feed that starts again from its cursor file, in the object-graph test: holds
/// the feed's first request for the changes since the kept position until the app's first read
/// has got past the feed (and is about to be answered by the caches) or waits for it there. So
/// every restart step meets the race a real app meets now and then: its first fetch sent before
/// the feed has told what changed while it was stopped.
final class GraphHeldCatchUp: StoreHandler {
    let name = "held-catch-up"
    private let feed: ChangeFeedHandler
    private let state = Watched((held: false, reads: 0))

    init(below feed: ChangeFeedHandler) {
        self.feed = feed
    }

    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws -> StoreResponse {
        switch request {
        case .changes(let asked) where asked.cursor != nil:
            let first = state.withLock { state in
                defer { state.held = true }
                return !state.held
            }
            if first {
                try await firstOf(
                    { try await self.state.wait(for: "a read past the feed") { $0.reads > 0 } },
                    { try await self.feed.waitForReadsWaitingToCatchUp(1) })
            }
        case .save, .changes: break
        default: state.withLock { $0.reads += 1 }
        }
        return try await next(request, context)
    }
}
