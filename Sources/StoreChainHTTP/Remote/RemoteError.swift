import Foundation
import StoreChain

/// The errors the remote adapter throws, as `StoreChainError`s that name the request, the status
/// and what to do. Secrets never appear: URLs are printed without credentials and headers are
/// never printed.
public enum RemoteError {
    /// The backend answered with an error status: its code in the core's terms (`code(for:)`).
    public static func status(_ request: TransportRequest, _ response: TransportResponse) -> StoreChainError {
        let start = String(decoding: response.body.prefix(200), as: UTF8.self)
        var error = StoreChainError(
            code(for: response.status), "\(request.method) \(redacted(request.url)) answered \(response.status)",
            at: .init(path: redacted(request.url)), suggestion: suggestion(for: response.status))
        if !start.isEmpty { error.detail = "body starts: \(start)" }
        error.status = response.status
        // A Retry-After date counts from the backend's own Date (no clock skew), else from when
        // the response arrived by the chain's clock.
        let now =
            response[header: "date"].flatMap { HTTPDate.parse($0, now: response.receivedAt ?? .distantPast) }
            ?? response.receivedAt
        error.retryAfter = retryAfter(response[header: "retry-after"], now: now)
        return error
    }

    /// What an error status means, the one place statuses are read: 409 and 412 a conflict,
    /// 429 a rate limit, 408 and 5xx a backend unavailable for now, any other a refusal.
    public static func code(for status: Int) -> StoreChainError.Code {
        switch status {
        case 409, 412: .conflict
        case 429: .rateLimited
        case 408, 500..<600: .backendUnavailable
        default: .httpStatus
        }
    }

    /// The error for `request` not answered within its timeout (`timed-out`).
    public static func timedOut(_ request: TransportRequest) -> StoreChainError {
        StoreChainError(
            .timedOut, "\(request.method) \(redacted(request.url)) did not answer within \(request.timeout)",
            at: .init(path: redacted(request.url)), suggestion: "raise the timeout, or retry later")
    }

    /// The error for `request` failing before an answer came (`transport`), with the cause.
    public static func transport(_ request: TransportRequest, _ error: any Error) -> StoreChainError {
        StoreChainError(
            .transport, "\(request.method) \(redacted(request.url)) failed before an answer",
            at: .init(path: redacted(request.url)),
            suggestion: "check that the backend is running and reachable at that address", underlying: error)
    }

    /// The error for an answer to `request` larger than `limit` bytes (`transport`).
    public static func bodyTooLarge(_ request: TransportRequest, limit: Int) -> StoreChainError {
        StoreChainError(
            .transport, "\(request.method) \(redacted(request.url)) sent a body larger than \(limit) bytes",
            at: .init(path: redacted(request.url)), suggestion: "raise maxBodySize, or page the endpoint")
    }

    /// The URL without user, password or query parameters marked secret.
    static func redacted(_ url: URL, secretParameters: Set<String> = ["token", "access_token", "api_key", "key"])
        -> String
    {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<url>" }
        components.user = nil
        components.password = nil
        components.queryItems = components.queryItems?.map { item in
            secretParameters.contains(item.name.lowercased()) ? URLQueryItem(name: item.name, value: "REDACTED") : item
        }
        return components.string ?? "<url>"
    }

    /// `Retry-After` as seconds (`120`) or an HTTP date relative to `now` (a date without a
    /// time to count from is ignored).
    static func retryAfter(_ header: String?, now: Date?) -> Duration? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Int(header), seconds >= 0 { return .seconds(seconds) }
        guard let now, let date = HTTPDate.parse(header, now: now) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1_000)))
    }

    private static func suggestion(for status: Int) -> String {
        switch status {
        case 401, 403: "check the credentials (the token environment variable) and their rights"
        case 404: "check the endpoint template and the base URL"
        case 408, 429, 503: "the backend is busy or limiting; retry later (add a retry or rate-limit handler)"
        case 500..<600: "the backend failed; retry later (add a retry handler)"
        default: "check the request against the backend's documentation"
        }
    }
}
