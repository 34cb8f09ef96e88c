import StoreChain

/// A pass-through handler that records the requests it sees and the responses coming back, for
/// checking order and post-processing in tests.
public final class RecordingHandler: StoreHandler {
    public let name: String
    private let shared: SharedLog

    /// Records into `log` as "name ↓ kind" on the way down and "name ↑ kind" on the way up.
    public init(_ name: String, log: SharedLog) {
        self.name = name
        self.shared = log
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        shared.append("\(name) ↓ \(request.kind.rawValue)")
        let response = try await next(request, context)
        shared.append("\(name) ↑ \(request.kind.rawValue)")
        return response
    }
}

/// An append-only log shared by test handlers.
public final class SharedLog: Sendable {
    private let entries = Locked<[String]>([])

    /// An empty log.
    public init() {}

    /// Adds `entry` at the end.
    public func append(_ entry: String) {
        entries.withLock { $0.append(entry) }
    }

    /// Every entry, in order.
    public var all: [String] {
        entries.withLock { $0 }
    }
}
