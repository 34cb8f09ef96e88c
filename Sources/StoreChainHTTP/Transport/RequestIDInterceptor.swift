import Foundation
import StoreChain

/// Gives every HTTP exchange a fresh UUID in a header (`X-Request-ID` unless named otherwise),
/// so the backend's logs can be matched to ours. Pipeline files: `- request-id: { header: … }`.
public struct RequestIDInterceptor: HTTPInterceptor {
    /// The header the ID is sent in.
    public let header: String

    /// Sends a fresh ID in `header` with every exchange.
    public init(header: String = "X-Request-ID") {
        self.header = header
    }

    public func intercept(
        _ request: TransportRequest, context: RequestContext,
        next: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        var request = request
        request.headers[header] = UUID().uuidString
        return try await next(request)
    }
}

extension RequestIDInterceptor: Decodable {
    private enum CodingKeys: String, CodingKey {
        case header
    }

    /// Reads `{ header: X-Request-ID }`; left out, the header is the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let header = try container.decodeIfPresent(String.self, forKey: .header) {
            self.init(header: header)
        } else {
            self.init()
        }
    }
}
