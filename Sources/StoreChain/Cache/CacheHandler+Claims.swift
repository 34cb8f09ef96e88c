import Foundation

extension CacheHandler {
    /// How often a process waiting for another process's answer checks whether it has come.
    static var claimPollInterval: Duration { .milliseconds(20) }

    /// Forwards a miss once for every process sharing the storage: this process claims `key` and
    /// runs `forward` (which stores the answer); while another process holds the claim, this one
    /// waits, up to the storage's `claimWait` (or until the request's deadline, which throws
    /// `timedOut`), and then answers with what the other stored
    /// (`stored`: `nil` when nothing usable was), forwarding itself only when that fails. With a
    /// storage that is this process's alone, forwards at once.
    func forwardOnce(
        _ key: String, context: RequestContext, stored: () async -> StoreResponse?,
        forward: () async throws -> StoreResponse
    ) async throws -> Forwarded {
        guard let wait = storage.claimWait else { return Forwarded(response: try await forward(), isStored: false) }
        let clock = context.clock
        let giveUp = clock.now.addingTimeInterval(wait.timeInterval)
        // Another process may have stored the answer after this one looked and before it claimed;
        // a reload takes only an answer fetched while it waited.
        var takesStored = context.cachePolicy != .reload
        while true {
            if let claim = await storage.claim(key) {
                if takesStored, let answer = await stored() {
                    await claim.release()
                    return Forwarded(response: answer, isStored: true)
                }
                do {
                    let response = try await forward()
                    await claim.release()
                    return Forwarded(response: response, isStored: false)
                } catch {
                    await claim.release()
                    throw error
                }
            }
            guard clock.now < giveUp else {
                context.logger.notice(
                    "\(name): another process has been fetching \(key) for over \(wait); fetching it here too")
                return Forwarded(response: try await forward(), isStored: false)
            }
            // The request's own deadline ends the wait too: waiting on cannot answer it in time.
            try context.checkDeadline()
            takesStored = true
            try await clock.sleep(for: Self.claimPollInterval)
        }
    }

    /// The stored answer to `request` (a fetch in its forwarded form, or a fault), when it is
    /// fresh.
    func storedAnswer(to request: StoreRequest, context: RequestContext) async -> StoreResponse? {
        if case .fetch(let fetch) = request { return await storedAnswer(to: fetch, context: context) }
        return await storedFault(request, context: context)
    }

    /// The stored answer to a fetch in its forwarded form, when it is fresh.
    func storedAnswer(to forwarded: FetchRequest, context: RequestContext) async -> StoreResponse? {
        guard let plan = try? plans.plan(for: forwarded) else { return nil }
        let now = context.clock.now
        guard let cached = await perform("read", context: context, { try await lookup(plan, now: now) }) ?? nil,
            cached.freshness.isFresh(at: now)
        else { return nil }
        return cached.response
    }
}

/// What forwarding a miss brought: the answer from below, or one another process stored meanwhile.
struct Forwarded: Sendable {
    var response: StoreResponse
    /// Whether the answer was read from the storage (another process fetched it).
    var isStored: Bool
}
