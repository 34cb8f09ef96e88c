import Foundation
import StoreChain
import Tracing

/// One HTTP exchange as an OpenTelemetry client span (named by the method, with the HTTP
/// semantic-convention attributes), its context injected into the request's headers by the
/// tracer (`traceparent` with a W3C propagator), so the backend's spans join the trace.
enum HTTPClientSpan {
    static func run(
        _ request: TransportRequest, tracer: any Tracer,
        _ send: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        try await ChainTracing.span(tracer, request.method, ofKind: .client) { span in
            var request = request
            span.attributes["http.request.method"] = request.method
            span.attributes["url.full"] = RemoteError.redacted(request.url)
            if let scheme = request.url.scheme { span.attributes["url.scheme"] = scheme }
            if let host = request.url.host { span.attributes["server.address"] = host }
            if let port = request.url.port ?? defaultPort(of: request.url) { span.attributes["server.port"] = port }
            if let body = request.body { span.attributes["http.request.body.size"] = body.count }
            tracer.inject(InstrumentationContext.current ?? .topLevel, into: &request.headers, using: HeaderInjector())
            let response = try await send(request)
            span.attributes["http.response.status_code"] = response.status
            span.attributes["http.response.body.size"] = response.body.count
            if response.status >= 400 {
                span.attributes["error.type"] = String(response.status)
                span.setStatus(SpanStatus(code: .error))
            }
            return response
        }
    }

    private static func defaultPort(of url: URL) -> Int? {
        switch url.scheme?.lowercased() {
        case "https": 443
        case "http": 80
        default: nil
        }
    }
}

/// Writes a tracer's context into request headers.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout [String: String]) {
        headers[key] = value
    }
}
