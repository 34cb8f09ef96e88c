import Foundation
import StoreChain

/// Puts a token read from a file into a header of every HTTP exchange, reading the file again
/// when it changes: for credentials another process rotates (a mounted secret, a token a login
/// helper refreshes). A 401 answer makes it read the file once more and, when the token changed
/// in the meantime, resend. Pipeline files: `- token-file: { path: …, header: …, prefix: … }`.
public final class TokenFileInterceptor: HTTPInterceptor {
    public let url: URL
    public let header: String
    /// Written before the token: `Bearer ` for the Authorization header.
    public let prefix: String
    private let cache = Locked<(modified: Date, token: String)?>(nil)

    public init(url: URL, header: String = "Authorization", prefix: String = "Bearer ") {
        self.url = url
        self.header = header
        self.prefix = prefix
    }

    public func intercept(
        _ request: TransportRequest, context: RequestContext,
        next: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        var request = request
        let token = try currentToken()
        request.headers[header] = prefix + token
        let response = try await next(request)
        guard response.status == 401, let refreshed = try? currentToken(), refreshed != token else { return response }
        request.headers[header] = prefix + refreshed
        return try await next(request)
    }

    /// The file's token, read again only when its modification date changed.
    func currentToken() throws(StoreChainError) -> String {
        let modified: Date
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            modified = attributes[.modificationDate] as? Date ?? .distantPast
        } catch {
            throw StoreChainError(
                .unreadableFile, "the token file \(url.path) cannot be read: \(error.localizedDescription)",
                suggestion: "create it, or fix the path in the token-file interceptor")
        }
        if let cached = cache.withLock({ $0 }), cached.modified == modified { return cached.token }
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw StoreChainError(
                .unreadableFile, "the token file \(url.path) is not UTF-8 text: \(error.localizedDescription)",
                suggestion: "write the token alone on one line")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else {
            throw StoreChainError(
                .unreadableFile, "the token file \(url.path) is empty", suggestion: "write the token into it")
        }
        cache.withLock { $0 = (modified, token) }
        return token
    }
}
