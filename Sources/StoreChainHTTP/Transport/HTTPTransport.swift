import Foundation
import StoreChain

/// Sends one HTTP request and returns the whole response. The remote adapter talks to backends
/// only through this, so tests can put a `StubTransport` in its place.
public protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// An HTTP request as the adapter builds it.
public struct TransportRequest: Sendable, Hashable, CustomStringConvertible {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// How long the request may take in all.
    public var timeout: Duration
    /// Read the body as an event stream, ending by these rules rather than at the stream's end;
    /// `nil` reads the whole body.
    public var eventStream: EventStreamRead?

    public init(
        method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: Duration = .seconds(30),
        eventStream: EventStreamRead? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.eventStream = eventStream
    }

    /// `GET https://…`, for errors and logs (never with headers, which may hold secrets).
    public var description: String { "\(method) \(url.absoluteString)" }
}

/// An HTTP response: status, headers (looked up case-insensitively) and the whole body.
public struct TransportResponse: Sendable, Hashable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: Data
    /// When the request was sent and its response arrived, by the chain's clock (the remote
    /// responder sets them), for the response's age (RFC 9111 §4.2.3).
    public var requestedAt: Date?
    public var receivedAt: Date?

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    public subscript(header name: String) -> String? {
        headers[name.lowercased()]
    }
}
