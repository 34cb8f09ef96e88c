import Foundation
import StoreChain

/// Sends one HTTP request and returns the whole response. The remote adapter talks to backends
/// only through this, so tests can put a `StubTransport` in its place.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns its whole response, or throws a `transport` or `timed-out` error.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// An HTTP request as the adapter builds it.
public struct TransportRequest: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP method.
    public var method: String
    /// The whole URL, query included.
    public var url: URL
    /// Headers to send.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// How long the request may take in all.
    public var timeout: Duration
    /// Read the body as an event stream, ending by these rules rather than at the stream's end;
    /// `nil` reads the whole body.
    public var eventStream: EventStreamRead?

    /// A request; a 30-second timeout unless given.
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

/// An HTTP response: status, headers (looked up case-insensitively) and the whole body, or the
/// body as it arrives for an event stream held open.
public struct TransportResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    /// The whole body (empty when the body is handed on as it arrives, in `bodyStream`).
    public var body: Data
    /// The body as it arrives, when the request asked for an event stream held open
    /// (`EventStreamRead.held`) and the transport can hand it on; `nil` otherwise.
    public var bodyStream: TransportBodyStream?
    /// When the request was sent and its response arrived, by the chain's clock (the remote
    /// responder sets them), for the response's age (RFC 9111 §4.2.3).
    public var requestedAt: Date?
    /// When its response arrived.
    public var receivedAt: Date?
    /// The redirects the remote responder followed to get it (each an exchange of its own).
    public var redirects: Int = 0

    /// A response; header names are lower-cased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    /// A response whose body is handed on as it arrives (an event stream held open).
    public init(status: Int, headers: [String: String] = [:], bodyStream: TransportBodyStream) {
        self.init(status: status, headers: headers)
        self.bodyStream = bodyStream
    }

    /// The header `name`, whatever its case.
    public subscript(header name: String) -> String? {
        headers[name.lowercased()]
    }
}
