import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Reliability: a backend that misbehaves at the HTTP level (the demo backend's `/bad/…`
/// routes) gets a typed error naming the URL for every request, within the request's timeout,
/// and never a crash or a hang.
@Suite struct BadBackendTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let route: String
        let code: StoreChainError.Code
        let mentions: String
        /// The request timeout: short where the timeout is what the case tests, long elsewhere so
        /// a busy machine (the whole suite runs in parallel on two cores) cannot turn another
        /// misbehaviour into a time-out (`/bad/huge` did, in CI).
        var timeoutSeconds: Double = 60
        var testDescription: String { route }
    }

    static let cases = [
        Case(route: "/bad/truncated", code: .transport, mentions: "/bad/truncated"),
        Case(route: "/bad/never-ends", code: .timedOut, mentions: "did not answer within", timeoutSeconds: 2),
        Case(route: "/bad/huge", code: .transport, mentions: "sent a body larger than 1048576 bytes"),
        Case(route: "/bad/html", code: .malformedJSON, mentions: "/bad/html"),
        Case(route: "/bad/deep", code: .malformedJSON, mentions: "nesting is deeper than the limit"),
    ]

    @Test(arguments: cases)
    func everyMisbehaviourEndsInATypedError(_ badCase: Case) async throws {
        let backend = try DemoBackend(bands: 2)
        let port = try await backend.start()
        var options = DemoRemoteOptions.v2(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        options.baseURL = URL(string: "http://127.0.0.1:\(port)")!
        options.timeoutSeconds = badCase.timeoutSeconds
        options.entities["Band"]?.fetch = [RemoteEndpoint("GET \(badCase.route)", records: "data")]
        let remote = try RemoteResponder(
            model: backend.model, options: options, transport: AsyncHTTPClientTransport(maxBodySize: 1 << 20))
        let error = await #expect(throws: StoreChainError.self) {
            try await remote.respondInAChain(to: .fetch(FetchRequest(entity: "Band")), context: RequestContext())
        }
        #expect(error?.code == badCase.code, "\(String(describing: error))")
        #expect("\(String(describing: error))".contains(badCase.mentions), "\(String(describing: error))")
        await backend.stop()
    }

    /// A redirect was followed inside the HTTP client: the backend saw two requests, the traffic
    /// figures, tracing and the answer's exchanges one. Each hop is now an exchange of its own.
    @Test func aRedirectIsFollowedAndCountedByTheChain() async throws {
        let backend = try DemoBackend(bands: 3)
        let port = try await backend.start()
        var options = DemoRemoteOptions.v2(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        options.baseURL = URL(string: "http://127.0.0.1:\(port)")!
        options.entities["Band"]?.fetch = [RemoteEndpoint("GET /bad/moved", records: "data")]
        let remote = try RemoteResponder(model: backend.model, options: options)
        do {
            let response = try await remote.respondInAChain(
                to: .fetch(FetchRequest(entity: "Band")), context: RequestContext())
            guard case .objects(let bands) = try response.fetchResult() else {
                Issue.record("a fetch answers objects")
                await backend.stop()
                return
            }
            #expect(bands.count == 3)
            #expect(response.info.exchanges == 2)
            #expect(remote.traffic.requests == 2)
            #expect(backend.stats.requestsByRoute["/bad/moved"] == 1 && backend.stats.requestsByRoute["/v2/bands"] == 1)
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }
}
