import StoreChain

/// Sees every HTTP exchange of a `RemoteResponder` and may change it: add a header (a client id,
/// a token read at run time, a trace header), record the exchange, or resend with a refreshed
/// credential. Interceptors run in the order given; the first is outermost.
///
/// ```swift
/// struct ClientID: HTTPInterceptor {
///     func intercept(
///         _ request: TransportRequest, context: RequestContext,
///         next: (TransportRequest) async throws -> TransportResponse
///     ) async throws -> TransportResponse {
///         var request = request
///         request.headers["X-Client-Id"] = "my-app"
///         return try await next(request)
///     }
/// }
/// let remote = try RemoteResponder(model: model, options: options, interceptors: [ClientID()])
/// ```
///
/// The remote checks the final response's status after every interceptor has returned, so an
/// interceptor sees 401s and 5xx answers as responses. Each call of `next` is one exchange in
/// the remote's traffic figures.
public protocol HTTPInterceptor: Sendable {
    /// Sends `request` on through `next` (the interceptors after this one, then the transport),
    /// changed as needed; `next` may be called more than once, or not at all.
    func intercept(
        _ request: TransportRequest, context: RequestContext,
        next: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse
}
