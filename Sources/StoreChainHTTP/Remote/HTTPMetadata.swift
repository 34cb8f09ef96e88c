/// The response headers worth passing up the chain in `ResponseInfo.metadata`.
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
}
