import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StoreChain

/// The default transport: AsyncHTTPClient, on Linux and Apple platforms. Decompresses gzip and
/// deflate bodies, and refuses bodies larger than `maxBodySize`.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The client requests are sent with.
    public let client: HTTPClient
    /// The largest body accepted; a larger one fails with a `transport` error.
    public var maxBodySize: Int
    /// Whether the client decompresses bodies, so gzip may be asked for.
    public let decompresses: Bool

    /// Uses a process-wide client that decompresses gzip and deflate bodies (it lives as long
    /// as the process, so it needs no shutdown).
    public init(maxBodySize: Int = 64 * 1024 * 1024) {
        self.init(client: Self.decompressingClient, decompresses: true, maxBodySize: maxBodySize)
    }

    /// Uses your client; say whether it was configured to decompress bodies.
    public init(client: HTTPClient, decompresses: Bool, maxBodySize: Int = 64 * 1024 * 1024) {
        self.client = client
        self.decompresses = decompresses
        self.maxBodySize = maxBodySize
    }

    /// The default client: the shared event loops, body decompression with a ratio limit
    /// against decompression bombs, and connections not retried inside the client.
    public static let decompressingClient = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: defaultConfiguration)

    /// The default client's configuration: redirects are not followed by the client (the
    /// remote responder follows them, each hop an exchange of its own). A connection that cannot be made (refused, no route,
    /// a name that does not resolve) fails the request at once with a transport error, which
    /// the chain's retry handler sees, logs and retries with backoff; AsyncHTTPClient's own
    /// retries would hide it until the connect timeout (10 s), and an offline save waited for
    /// them before it was acknowledged as pending.
    public static var defaultConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(decompression: .enabled(limit: .ratio(100)))
        configuration.connectionPool.retryConnectionEstablishment = false
        // Redirects come back to the remote responder, which follows them through its
        // interceptors, so each hop is counted and seen (a client following them hid a second
        // request from the traffic figures, tracing and the rate limiter's accounting).
        configuration.redirectConfiguration = .disallow
        return configuration
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        if decompresses {
            outgoing.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        }
        for (name, value) in request.headers { outgoing.headers.replaceOrAdd(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        // The request's timeout covers the whole exchange. AsyncHTTPClient's own deadline ends
        // when the head arrives, so a body that never ends would otherwise wait forever.
        let started = ContinuousClock.now
        let timeout = TimeAmount.nanoseconds(Int64(request.timeout.timeInterval * 1e9))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: timeout)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw RemoteError.timedOut(request)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw RemoteError.transport(request, error)
        }
        if let read = request.eventStream, read.held, (200..<300).contains(response.status.code) {
            return TransportResponse(
                status: Int(response.status.code), headers: Self.headers(of: response),
                bodyStream: Self.handingOn(response.body, of: request))
        }
        var body: ByteBuffer
        do {
            if let read = request.eventStream, (200..<300).contains(response.status.code) {
                body = try await EventStreamCollector.collect(response.body, read: read, upTo: maxBodySize)
            } else {
                body = try await Self.collect(
                    response.body, upTo: maxBodySize, within: request.timeout - (ContinuousClock.now - started), request
                )
            }
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw RemoteError.bodyTooLarge(request, limit: maxBodySize)
        } catch let error as StoreChainError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw RemoteError.transport(request, error)
        }
        let bytes = body.readBytes(length: body.readableBytes) ?? []
        return TransportResponse(
            status: Int(response.status.code), headers: Self.headers(of: response), body: Data(bytes))
    }

    /// The response's headers, names lower-cased, repeated ones joined with commas.
    private static func headers(of response: HTTPClientResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for header in response.headers {
            let name = header.name.lowercased()
            headers[name] = headers[name].map { "\($0), \(header.value)" } ?? header.value
        }
        return headers
    }

    /// The body handed on chunk by chunk while it lasts; when the reader stops, reading stops,
    /// which closes the connection. The request's timeout does not apply: it ended with the head.
    private static func handingOn(_ body: HTTPClientResponse.Body, of request: TransportRequest)
        -> TransportBodyStream
    {
        let (stream, chunks) = TransportBodyStream.makeStream()
        let reading = Task {
            do {
                for try await chunk in body { chunks.yield(Array(chunk.readableBytesView)) }
                chunks.finish()
            } catch is CancellationError {
                chunks.finish(throwing: CancellationError())
            } catch {
                chunks.finish(throwing: RemoteError.transport(request, error))
            }
        }
        chunks.onTermination = { _ in reading.cancel() }
        return stream
    }

    /// The whole body, or a timed-out error when it has not ended within `timeout`.
    private static func collect(
        _ body: HTTPClientResponse.Body, upTo limit: Int, within timeout: Duration, _ request: TransportRequest
    ) async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: limit) }
            group.addTask {
                try await Task.sleep(for: max(timeout, .zero))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let buffer = first else { throw RemoteError.timedOut(request) }
            return buffer
        }
    }
}
