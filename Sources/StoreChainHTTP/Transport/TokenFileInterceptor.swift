import Foundation
import StoreChain

/// Puts a token read from a file into a header of every HTTP exchange, reading the file again
/// when it changes: for credentials another process rotates (a mounted secret, a token a login
/// helper refreshes). A 401 answer makes it read the file once more and, when the token changed
/// in the meantime, resend. Pipeline files: `- token-file: { path: …, header: …, prefix: … }`.
public final class TokenFileInterceptor: HTTPInterceptor {
    /// The file holding the token.
    public let url: URL
    /// The header the token is sent in.
    public let header: String
    /// Written before the token: `Bearer ` for the Authorization header.
    public let prefix: String
    private let cache = Locked<(modified: Date, token: String)?>(nil)

    /// Sends the token in the file at `url` in `header`, after `prefix`; the file is read again when
    /// it changes.
    public init(url: URL, header: String = Options.defaultHeader, prefix: String = Options.defaultPrefix) {
        self.url = url
        self.header = header
        self.prefix = prefix
    }

    /// A token-file interceptor as a pipeline file gives it: `{ path: ~/.config/music/token,
    /// header: Authorization, prefix: "Bearer " }`, the path still to be resolved against the
    /// file's folder.
    public struct Options: Sendable, Hashable, Decodable {
        /// `Authorization`.
        public static let defaultHeader = "Authorization"
        /// `Bearer `, with its space.
        public static let defaultPrefix = "Bearer "

        /// The token file's path, relative to the pipeline file's folder.
        public var path: String
        /// The header the token is sent in.
        public var header: String
        /// Written before the token.
        public var prefix: String

        /// Options for the token file at `path`.
        public init(path: String, header: String = defaultHeader, prefix: String = defaultPrefix) {
            self.path = path
            self.header = header
            self.prefix = prefix
        }

        private enum CodingKeys: String, CodingKey {
            case path, header, prefix
        }

        /// Reads `path` (required), `header` and `prefix`; a key left out keeps the default.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                path: try container.decode(String.self, forKey: .path),
                header: try container.decodeIfPresent(String.self, forKey: .header) ?? Self.defaultHeader,
                prefix: try container.decodeIfPresent(String.self, forKey: .prefix) ?? Self.defaultPrefix)
        }
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
