import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Interceptors over each HTTP exchange of the remote terminal (Swift side; pipeline files in
/// StoreChainPipelineTests).
@Suite struct HTTPInterceptorTests {
    /// The order interceptors ran in.
    final class Order: Sendable {
        let names = Locked<[String]>([])
    }

    /// Adds a header, remembering in which order it ran.
    struct Header: HTTPInterceptor {
        let name: String
        let value: String
        let order: Order

        func intercept(
            _ request: TransportRequest, context: RequestContext,
            next: (TransportRequest) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            order.names.withLock { $0.append(value) }
            var request = request
            request.headers[name] = value
            return try await next(request)
        }
    }

    /// Answers a 401 by taking a new token and resending once.
    final class RefreshingToken: HTTPInterceptor {
        let token = Locked("old")

        func intercept(
            _ request: TransportRequest, context: RequestContext,
            next: (TransportRequest) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var request = request
            request.headers["Authorization"] = "Bearer \(token.withLock { $0 })"
            let response = try await next(request)
            guard response.status == 401 else { return response }
            token.withLock { $0 = "new" }
            request.headers["Authorization"] = "Bearer new"
            return try await next(request)
        }
    }

    final class Flag: Sendable {
        let value = Locked(false)
    }

    func bands(_ remote: RemoteResponder) async throws -> [ObjectID] {
        let response = try await remote.respondInAChain(to: .fetch(TestData.fetch("Band")), context: RequestContext())
        return try response.fetchResult().nodes.map(\.id)
    }

    @Test func interceptorsChangeEveryExchangeInOrder() async throws {
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        let order = Order()
        let remote = try RemoteResponder(
            model: RemoteFixtures.model(), options: RemoteFixtures.options(), transport: transport,
            interceptors: [
                Header(name: "X-Client-Id", value: "outer", order: order),
                Header(name: "X-Client-Id", value: "inner", order: order), RequestIDInterceptor(),
            ], environment: [:])
        _ = try await bands(remote)
        _ = try await bands(remote)
        #expect(order.names.withLock { $0 } == ["outer", "inner", "outer", "inner"])
        #expect(transport.requests.map { $0.headers["X-Client-Id"] } == ["inner", "inner"], "the inner one runs last")
        let ids = transport.requests.compactMap { $0.headers["X-Request-ID"] }
        #expect(ids.count == 2 && Set(ids).count == 2 && ids.allSatisfy { UUID(uuidString: $0) != nil })
    }

    @Test func anInterceptorSeesA401AndMayResend() async throws {
        let transport = StubTransport { request in
            request.headers["Authorization"] == "Bearer new" ? .json(RemoteFixtures.bandsPage) : .status(401)
        }
        let remote = try RemoteResponder(
            model: RemoteFixtures.model(), options: RemoteFixtures.options(), transport: transport,
            interceptors: [RefreshingToken()], environment: [:])
        #expect(try await bands(remote).isEmpty == false)
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer old", "Bearer new"])
        #expect(remote.traffic.requests == 2, "each exchange counts")
        #expect(
            Chain(handlers: [], terminal: remote).upstreamTraffic == remote.traffic, "an app reads it from its chain")
        #expect(Chain(handlers: [], terminal: InMemoryStore(model: try RemoteFixtures.model())).upstreamTraffic == nil)
    }

    @Test func withoutAResendThe401IsTheError() async throws {
        let transport = StubTransport { _ in .status(401) }
        let remote = try RemoteResponder(
            model: RemoteFixtures.model(), options: RemoteFixtures.options(), transport: transport,
            interceptors: [RequestIDInterceptor()], environment: [:])
        let error = await #expect(throws: StoreChainError.self) { try await bands(remote) }
        #expect(error?.code == .httpStatus)
    }

    @Test func aTokenFileIsReadAgainWhenItChanges() async throws {
        let file = TemporaryFolder.make("token")
        @Sendable func write(_ token: String, age: TimeInterval) throws {
            try token.write(to: file, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: age)], ofItemAtPath: file.path)
        }
        try write("first\n", age: 0)
        // While "second" is in use, the token is rotated during an exchange, which the backend
        // answers with a 401.
        let rotatesDuringExchange = Flag()
        let transport = StubTransport { request in
            guard rotatesDuringExchange.value.withLock({ $0 }), request.headers["Authorization"] == "Bearer second"
            else {
                return .json(RemoteFixtures.bandsPage)
            }
            try write("third", age: 120)
            return .status(401)
        }
        let remote = try RemoteResponder(
            model: RemoteFixtures.model(), options: RemoteFixtures.options(), transport: transport,
            interceptors: [TokenFileInterceptor(url: file)], environment: [:])
        _ = try await bands(remote)
        try write("second", age: 60)
        _ = try await bands(remote)
        rotatesDuringExchange.value.withLock { $0 = true }
        _ = try await bands(remote)
        #expect(
            transport.requests.map { $0.headers["Authorization"] } == [
                "Bearer first", "Bearer second", "Bearer second", "Bearer third",
            ])

        try FileManager.default.removeItem(at: file)
        let error = await #expect(throws: StoreChainError.self) { try await bands(remote) }
        #expect(error?.code == .unreadableFile)
        #expect(error?.message.contains(file.path) == true, "\(String(describing: error))")
    }
}
