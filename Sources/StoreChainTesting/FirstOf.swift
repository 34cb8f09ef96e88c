/// Waits for whichever of `waits` ends first and cancels the others: for a test that waits for
/// one of several events (a handler's timer going back to sleep, or its request arriving).
///
/// ```swift
/// try await firstOf({ try await clock.waitForSleepers(1) }, { try await terminal.waitForRequests(1) })
/// ```
public func firstOf(_ waits: (@Sendable () async throws -> Void)...) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for wait in waits { group.addTask { try await wait() } }
        try await group.next()
        group.cancelAll()
    }
}
