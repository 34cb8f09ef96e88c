/// What an outbox does when the backend refuses a replayed update because the object changed
/// since the version the update was based on (HTTP 412 to `If-Match`, or 409).
public enum ConflictPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Drop the local change; the app reads the backend's current object.
    case serverWins
    /// Send the local change again, unconditionally.
    case clientWins
    /// Apply the changed attributes and relationships onto the backend's current version and
    /// send them again, conditional on that version.
    case merge
    /// A resolver the app registered with the outbox under this name.
    case named(String)

    /// Reads `server-wins`, `client-wins`, `merge`, or any other name as a registered resolver.
    public init(_ text: String) {
        switch text {
        case "server-wins": self = .serverWins
        case "client-wins": self = .clientWins
        case "merge": self = .merge
        default: self = .named(text)
        }
    }

    public var description: String {
        switch self {
        case .serverWins: "server-wins"
        case .clientWins: "client-wins"
        case .merge: "merge"
        case .named(let name): name
        }
    }
}
