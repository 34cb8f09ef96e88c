import Foundation
import MetricsTestKit
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Each exchange with the backend is counted once, where it is made, however its page reached
/// the remote: from a pagination handler below the metrics, or as a sub-request the remote sent
/// from the top of the chain, through the metrics handler again.
@Suite struct RemoteExchangeCountTests {
    @Test(arguments: [true, false])
    func everyPageIsOneUpstreamRequest(withPager: Bool) async throws {
        let metrics = TestMetrics()
        let (remote, transport) = try RemotePagingTests.remote(.pageNumber)
        var handlers: [any StoreHandler] = [MetricsHandler(factory: metrics)]
        if withPager { handlers.append(PaginationHandler(model: try RemotePagingTests.model())) }
        let chain = Chain(handlers: handlers, terminal: remote)
        let response = try await chain.send(.fetch(FetchRequest(entity: "Band")))
        #expect(transport.requests.count == 6)
        #expect(try metrics.expectCounter("storechain_upstream_requests_total", [("method", "GET")]).totalValue == 6)
        #expect(response.info.pagesRead == 6)
        #expect(response.info.exchanges == 6)
        #expect(response.info.http?.status == 200)
        #expect(response.info.http?.endpoint == "GET /bands?page={page}&per_page={per_page}")
    }
}
