import Foundation
import PostgresNIO
import StoreChain

/// Where a PostgreSQL server is and who to connect as, read from a URL such as
/// `postgres://storechain:secret@db.internal:5432/cache` (`postgresql://` too). Its
/// `description` never shows the password.
public struct PostgresAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String?
    /// Whether the connection must use TLS (`?sslmode=require`); otherwise it is plain TCP, as
    /// on loopback or a private network.
    public var requiresTLS: Bool

    public init(
        host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil,
        requiresTLS: Bool = false
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.requiresTLS = requiresTLS
    }

    /// Reads a `postgres://user:password@host:port/database` URL; throws an error naming what is
    /// wrong with it (the password is never repeated in the message).
    public init(url text: String) throws(StoreChainError) {
        let shown = Self.withoutPassword(text)
        func problem(_ message: String, _ suggestion: String) -> StoreChainError {
            StoreChainError(
                .invalidPipeline, "the PostgreSQL URL '\(shown)' \(message)", at: .init(path: "url"),
                suggestion: suggestion)
        }
        let example =
            "write postgres://USER:PASSWORD@HOST:PORT/DATABASE (a password with special characters percent-encoded)"
        guard let components = URLComponents(string: text) else { throw problem("is not a URL", example) }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw problem("does not start with postgres://", example)
        }
        guard let host = components.host, !host.isEmpty else { throw problem("names no host", example) }
        guard let user = components.user, !user.isEmpty else { throw problem("names no user", example) }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        if database.contains("/") { throw problem("has a path with more than a database name", example) }
        var requiresTLS = false
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "require"?): requiresTLS = true
            case ("sslmode", "disable"?): requiresTLS = false
            default:
                throw problem(
                    "has an option this client does not read: '\(item.name)'", "use sslmode=require or sslmode=disable")
            }
        }
        self.init(
            host: host, port: components.port ?? 5432, username: components.user?.removingPercentEncoding ?? user,
            password: components.password?.removingPercentEncoding, database: database.isEmpty ? nil : database,
            requiresTLS: requiresTLS)
    }

    /// The URL with its password left out, for logs and errors.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database ?? username)"
    }

    /// `text` with the password of its user part replaced by `***`.
    static func withoutPassword(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else {
            return text
        }
        let user = text[scheme.upperBound..<at]
        guard let colon = user.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }

    var configuration: PostgresConnection.Configuration {
        get throws {
            let tls: PostgresConnection.Configuration.TLS =
                requiresTLS ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable
            return PostgresConnection.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: tls)
        }
    }
}
