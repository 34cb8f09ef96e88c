import Foundation
import StoreChain

/// What the chain learns from a response's headers: the ones worth passing up in
/// `ResponseInfo.metadata`, and the response's freshness (`HTTPFreshness`).
enum HTTPMetadata {
    static let headers = [
        "cache-control", "expires", "etag", "last-modified", "link", "retry-after", "age", "date",
        "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset",
    ]

    static func metadata(from response: TransportResponse) -> [String: String] {
        var metadata = ["status": String(response.status)]
        for name in headers { if let value = response[header: name] { metadata[name] = value } }
        return metadata
    }

    /// The answer's info for a response the remote responder received.
    static func info(from response: TransportResponse, answeredBy name: String, notModified: Bool = false)
        -> ResponseInfo
    {
        var info = ResponseInfo(
            answeredBy: name, origin: .remote, metadata: metadata(from: response), notModified: notModified)
        info.freshness = freshness(of: response)
        return info
    }

    /// The response's freshness, its age counted from when it was exchanged.
    static func freshness(of response: TransportResponse) -> ResponseFreshness {
        let received = response.receivedAt ?? response.requestedAt ?? Date(timeIntervalSince1970: 0)
        return HTTPFreshness.read(
            headers: response.headers, requestTime: response.requestedAt ?? received, responseTime: received)
    }
}
