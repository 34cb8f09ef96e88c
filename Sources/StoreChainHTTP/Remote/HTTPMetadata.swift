import Foundation
import StoreChain

/// What the chain learns from a response's headers: the ones worth passing up in
/// `ResponseInfo.http`, and the response's freshness (`HTTPFreshness`).
enum HTTPMetadata {
    static let headers = [
        "cache-control", "expires", "etag", "last-modified", "link", "retry-after", "age", "date",
        "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset",
    ]

    private static func headers(of response: TransportResponse) -> [String: String] {
        var kept: [String: String] = [:]
        for name in headers { if let value = response[header: name] { kept[name] = value } }
        return kept
    }

    /// The answer's info for a response the remote responder received.
    static func info(from response: TransportResponse, answeredBy name: String, notModified: Bool = false)
        -> ResponseInfo
    {
        var info = ResponseInfo(answeredBy: name, origin: .remote, notModified: notModified)
        info.http = HTTPExchange(status: response.status, headers: headers(of: response))
        info.exchanges = 1 + response.redirects
        info.freshness = freshness(of: response)
        info.rateLimit = rateLimit(of: response)
        return info
    }

    /// What `X-RateLimit-Remaining` and `X-RateLimit-Reset` say, when both are there and read:
    /// the reset in epoch seconds (GitHub) or in seconds from now (most others).
    private static func rateLimit(of response: TransportResponse) -> RateLimitStatus? {
        func number(_ name: String) -> Double? {
            response[header: name].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        guard let remaining = number("x-ratelimit-remaining").flatMap({ Int(exactly: $0) }),
            let reset = number("x-ratelimit-reset"), reset >= 0, reset.isFinite
        else { return nil }
        return RateLimitStatus(
            remaining: remaining,
            reset: reset > 1_000_000_000
                ? .at(Date(timeIntervalSince1970: reset)) : .after(.milliseconds(Int64(reset * 1_000))))
    }

    /// The response's freshness, its age counted from when it was exchanged.
    static func freshness(of response: TransportResponse) -> ResponseFreshness {
        let received = response.receivedAt ?? response.requestedAt ?? Date(timeIntervalSince1970: 0)
        return HTTPFreshness.read(
            status: response.status, headers: response.headers, requestTime: response.requestedAt ?? received,
            responseTime: received)
    }
}

extension ResponseInfo {
    /// Says which backend request answered and what of the predicate it applied (on the
    /// exchange's facts: an answer that made no exchange has none).
    mutating func describe(_ plan: QueryPlanner.Plan) {
        http?.endpoint = plan.endpoint.request
        http?.pushedPredicate =
            switch plan.pushed.count {
            case 0: nil
            case 1: plan.pushed[0]
            default: .and(plan.pushed)
            }
    }
}
