import StoreChain

/// A terminal for tests: answers with a script (or forwards to a real responder) and records
/// every request that reaches it, so a test can check what was forwarded and how often.
///
/// ```swift
/// let terminal = RecordingResponder(forwardingTo: InMemoryStore(model: model, nodes: nodes))
/// let chain = Chain(terminal: terminal) { MyCache() }
/// _ = try await chain.fetch(request)
/// _ = try await chain.fetch(request)
/// try terminal.requireForwarded(exactly: 1, .fetch)   // the cache answered the second time
/// ```
public final class RecordingResponder: StoreResponder {
    /// Answers one request.
    public typealias Script = @Sendable (StoreRequest, RequestContext) async throws -> StoreResponse

    private let script: Script
    private let recorded = Watched<[StoreRequest]>([])
    /// The name it answers as.
    public let name: String

    /// Answers every request with `script`.
    public init(name: String = "RecordingResponder", script: @escaping Script) {
        self.name = name
        self.script = script
    }

    /// Forwards every request to `responder` and records it.
    public convenience init(forwardingTo responder: any StoreResponder) {
        self.init(name: responder.name) { request, context in
            try await responder.respond(to: request, context: context)
        }
    }

    public func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        recorded.withLock { $0.append(request) }
        return try await script(request, context)
    }

    /// Every request that reached this responder, in order.
    public var requests: [StoreRequest] {
        recorded.withLock { $0 }
    }

    /// How many requests of `kind` (and, if given, about `entity`) arrived.
    public func count(_ kind: StoreRequest.Kind? = nil, entity: String? = nil) -> Int {
        Self.count(of: requests, kind, entity: entity)
    }

    private static func count(of requests: [StoreRequest], _ kind: StoreRequest.Kind?, entity: String?) -> Int {
        requests.filter { request in
            (kind == nil || request.kind == kind) && (entity == nil || request.entities.contains(entity ?? ""))
        }.count
    }

    /// Waits until at least `count` requests of `kind` (and, if given, about `entity`) have
    /// arrived, woken by the request that makes them `count` (no polling); fails with a
    /// `timedOut` error listing what arrived after a minute of real time.
    public func waitForRequests(
        _ count: Int, _ kind: StoreRequest.Kind? = nil, entity: String? = nil
    ) async throws {
        let what = [kind?.rawValue, entity].compactMap { $0 }.joined(separator: " ")
        try await recorded.wait(for: "\(count) \(what.isEmpty ? "" : what + " ")requests at \(name)") { requests in
            Self.count(of: requests, kind, entity: entity) >= count
        }
    }

    /// Forgets the recorded requests.
    public func reset() {
        recorded.withLock { $0.removeAll() }
    }

    /// Throws, listing what arrived, unless exactly `count` requests of `kind` arrived.
    public func requireForwarded(
        exactly count: Int, _ kind: StoreRequest.Kind? = nil, entity: String? = nil
    ) throws(ForwardingMismatch) {
        let actual = self.count(kind, entity: entity)
        guard actual == count else {
            throw ForwardingMismatch(
                expected: count, actual: actual, kind: kind, entity: entity, requests: requests)
        }
    }
}

/// A forwarding check that failed: what was expected and everything that arrived.
public struct ForwardingMismatch: Error, CustomStringConvertible {
    /// How many requests were expected.
    public let expected: Int
    /// How many arrived.
    public let actual: Int
    /// The kind counted, if only one.
    public let kind: StoreRequest.Kind?
    /// The entity counted, if only one.
    public let entity: String?
    /// Every request that arrived.
    public let requests: [StoreRequest]

    public var description: String {
        let what = [kind?.rawValue, entity].compactMap { $0 }.joined(separator: " ")
        let list = requests.map { "  - \($0)" }.joined(separator: "\n")
        return "expected \(expected) \(what.isEmpty ? "request" : what) request(s) to be forwarded, got \(actual); "
            + "forwarded:\n" + (list.isEmpty ? "  (none)" : list)
    }
}
