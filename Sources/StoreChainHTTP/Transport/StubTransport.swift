import Foundation
import StoreChain

/// A transport for unit tests: answers each request from a script and records it.
///
/// ```swift
/// let transport = StubTransport { request in
///     request.url.path == "/bands/1" ? .json(#"{"id": 1, "name": "Low"}"#) : .status(404)
/// }
/// ```
public final class StubTransport: HTTPTransport {
    /// Answers one request.
    public typealias Script = @Sendable (TransportRequest) async throws -> TransportResponse

    private let script: Script
    private let recorded = Locked<[TransportRequest]>([])

    /// A transport answering every request with `script`.
    public init(_ script: @escaping Script) {
        self.script = script
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        recorded.withLock { $0.append(request) }
        return try await script(request)
    }

    /// Every request sent, in order.
    public var requests: [TransportRequest] {
        recorded.withLock { $0 }
    }
}

extension TransportResponse {
    /// A 200 response with a JSON body.
    public static func json(_ text: String, status: Int = 200, headers: [String: String] = [:]) -> TransportResponse {
        var headers = headers
        headers["content-type"] = headers["content-type"] ?? "application/json"
        return TransportResponse(status: status, headers: headers, body: Data(text.utf8))
    }

    /// A response with no body.
    public static func status(_ status: Int, headers: [String: String] = [:]) -> TransportResponse {
        TransportResponse(status: status, headers: headers)
    }
}
