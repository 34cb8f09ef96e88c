import Foundation
@_spi(Internals) import StoreChain

/// One backend's HTTP exchanges: the headers every request carries (accept, authorization,
/// idempotency and validators), its timeout, the interceptors and the transport, with every
/// request and byte counted. Error statuses become errors here; retrying is `RetryHandler`'s
/// job, above, and remembering answers is the caches'.
final class RemoteExchange: Sendable {
    private let options: RemoteOptions
    private let transport: any HTTPTransport
    /// What every exchange passes through, outermost first.
    let interceptors: [any HTTPInterceptor]
    private let authorization: String?
    private let counters = Locked(UpstreamTraffic())

    init(
        options: RemoteOptions, transport: any HTTPTransport, interceptors: [any HTTPInterceptor],
        authorization: String?
    ) {
        self.options = options
        self.transport = transport
        self.interceptors = interceptors
        self.authorization = authorization
    }

    /// Requests and bytes exchanged so far.
    var traffic: UpstreamTraffic {
        counters.withLock { $0 }
    }

    /// One exchange with the backend: counted, conditional when given `validators`, and error
    /// statuses turned into errors (except those the caller accepts).
    func send(
        _ method: String, _ url: URL, body: JSONValue? = nil, ifChangedSince validators: Validators? = nil,
        idempotencyKey: String? = nil, ifMatch: String? = nil, longPoll: Duration? = nil,
        eventStream: EventStreamRead? = nil, lastEventID: String? = nil, context: RequestContext,
        accepting: Set<Int> = []
    ) async throws -> TransportResponse {
        try context.checkDeadline()
        var headers = options.headers
        if eventStream != nil {
            headers = headers.filter { $0.key.lowercased() != "accept" }
            headers["Accept"] = "text/event-stream"
            headers["Cache-Control"] = "no-cache"
            if let lastEventID { headers["Last-Event-ID"] = lastEventID }
        } else if !headers.keys.contains(where: { $0.lowercased() == "accept" }) {
            // A configured Accept (JSON:API's application/vnd.api+json) is sent as written.
            headers["Accept"] = "application/json"
        }
        if let authorization { headers["Authorization"] = authorization }
        if let idempotencyKey { headers["Idempotency-Key"] = idempotencyKey }
        if let ifMatch { headers["If-Match"] = ifMatch }
        if let validators {
            if let etag = validators.etag { headers["If-None-Match"] = etag }
            if let lastModified = validators.lastModified { headers["If-Modified-Since"] = lastModified }
        }
        var data: Data?
        if let body {
            data = Data(body.description.utf8)
            if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
                headers["Content-Type"] = "application/json"
            }
        }
        // A long poll may be held open for its wait before the backend starts to answer.
        var timeout = Duration.seconds(options.timeoutSeconds) + (longPoll ?? .zero)
        if let deadline = context.deadline {
            timeout = min(timeout, .seconds(max(0, deadline.timeIntervalSince(context.clock.now))))
        }
        let request = TransportRequest(
            method: method, url: url, headers: headers, body: data, timeout: timeout, eventStream: eventStream)
        let requestedAt = context.clock.now
        var response = try await followingRedirects(request, context: context)
        response.requestedAt = requestedAt
        response.receivedAt = context.clock.now
        guard (200..<300).contains(response.status) || response.status == 304 || accepting.contains(response.status)
        else { throw RemoteError.status(request, response) }
        return response
    }

    /// Sends `request`, and again to where a redirect points (at most `maxRedirects` times), each
    /// time through the interceptors: every hop is an exchange the traffic figures, tracing and
    /// metrics count, not one the HTTP client hides. A redirect stays on the backend's host
    /// (credentials go nowhere else); a 303, or a 301/302 to a POST, is followed with a GET.
    private func followingRedirects(_ request: TransportRequest, context: RequestContext) async throws
        -> TransportResponse
    {
        var current = request
        var response = try await send(current, from: interceptors[...], context: context)
        var hops = 0
        while Self.redirectStatuses.contains(response.status), let location = response[header: "location"] {
            guard hops < Self.maxRedirects else {
                throw StoreChainError(
                    .invalidResponse,
                    "\(request.method) \(RemoteError.redacted(request.url)) was redirected more than \(Self.maxRedirects) times",
                    at: .init(file: RemoteError.redacted(current.url)),
                    suggestion: "check the endpoint template and the base URL against where the backend serves it")
            }
            guard let target = URL(string: location, relativeTo: current.url)?.absoluteURL,
                target.host == current.url.host, target.port == current.url.port, target.scheme == current.url.scheme
            else {
                throw StoreChainError(
                    .invalidResponse,
                    "\(request.method) \(RemoteError.redacted(request.url)) was redirected off the backend, to "
                        + (URL(string: location).map { RemoteError.redacted($0) } ?? "<location>"),
                    at: .init(file: RemoteError.redacted(current.url)),
                    suggestion: "set the base URL to where the backend answers; redirects are followed on its host only"
                )
            }
            if response.status == 303 || (current.method == "POST" && [301, 302].contains(response.status)) {
                current.method = "GET"
                current.body = nil
            }
            current.url = target
            hops += 1
            context.logger.debug(
                "redirected (\(response.status)) to \(RemoteError.redacted(target)): the request is sent twice; write the template as the backend serves it",
                metadata: ["storechain.request": "\(RemoteError.redacted(request.url))"])
            response = try await send(current, from: interceptors[...], context: context)
        }
        response.redirects = hops
        return response
    }

    /// Statuses that send the request elsewhere, with a `Location`.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    /// Redirects followed for one request before it fails.
    static let maxRedirects = 5

    /// Sends a request through the interceptors left, then the transport.
    private func send(
        _ request: TransportRequest, from interceptors: ArraySlice<any HTTPInterceptor>, context: RequestContext
    ) async throws -> TransportResponse {
        guard let interceptor = interceptors.first else {
            // An exchange counts when it is attempted, so one that fails (a dropped
            // connection) shows in the traffic too.
            counters.withLock { traffic in
                traffic.requests += 1
                traffic.bytesSent += request.body?.count ?? 0
            }
            context[StoreMetricsKey.self]?.count("upstream_requests_total", ["method": request.method])
            guard let tracer = context.tracer else { return try await exchange(request) }
            return try await HTTPClientSpan.run(request, tracer: tracer) { try await exchange($0) }
        }
        return try await interceptor.intercept(request, context: context) { request in
            try await send(request, from: interceptors.dropFirst(), context: context)
        }
    }

    /// Sends a request through the transport, counting the bytes received.
    private func exchange(_ request: TransportRequest) async throws -> TransportResponse {
        var response = try await transport.send(request)
        counters.withLock { $0.bytesReceived += response.body.count }
        // A body held open is counted as it arrives.
        response.bodyStream = response.bodyStream?.observing { [self] chunk in
            counters.withLock { $0.bytesReceived += chunk.count }
        }
        return response
    }

    /// Parses a response body; malformed JSON names the URL and byte offset.
    func json(_ response: TransportResponse, from url: URL) throws(StoreChainError) -> JSONValue {
        if response.body.isEmpty { return .null }
        return try JSONParser().parse(response.body, source: RemoteError.redacted(url))
    }
}
