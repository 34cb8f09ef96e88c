import Synchronization

/// Runs one operation per key at a time: callers that arrive while it runs wait for its result
/// instead of starting their own. Waiters get the first caller's result or error.
final class SingleFlight<Value: Sendable>: Sendable {
    private let waiting = Mutex<[String: [CheckedContinuation<Value?, any Error>]]>([:])

    /// Runs `operation`, or joins the run already in flight for `key`.
    func run(_ key: String, _ operation: () async throws -> Value) async throws -> Value {
        // `nil` means "nobody is running it: you are the one who does".
        let joined: Value? = try await withCheckedThrowingContinuation { continuation in
            let isFirst = waiting.withLock { waiting in
                if waiting[key] != nil {
                    waiting[key]?.append(continuation)
                    return false
                }
                waiting[key] = []
                return true
            }
            if isFirst { continuation.resume(returning: nil) }
        }
        if let joined { return joined }
        let result: Result<Value, any Error>
        do {
            result = .success(try await operation())
        } catch {
            result = .failure(error)
        }
        let waiters = waiting.withLock { $0.removeValue(forKey: key) ?? [] }
        for waiter in waiters { waiter.resume(with: result.map { Optional($0) }) }
        return try result.get()
    }

    /// How many callers wait for the run in flight for `key` (for tests).
    func waiterCount(for key: String) -> Int { waiting.withLock { $0[key]?.count ?? 0 } }
}
