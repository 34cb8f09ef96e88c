/// How far a context's background merging has read the chain's change events, so that a call
/// can wait until the events published before it returned are merged (`ObjectContext.sync()`:
/// the objects show what the outbox sent when it returns).
final class MergeProgress: Sendable {
    private struct State {
        /// Events published before the merging subscribed, plus those it has read since.
        var read = 0
        var ended = false
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// The merging subscribed after `published` events.
    func start(after published: Int) {
        state.withLock { $0.read = published }
    }

    /// The merging read one more event.
    func advance() {
        let ready = state.withLock { state in
            state.read += 1
            let read = state.read
            defer { state.waiters.removeAll { $0.count <= read } }
            return state.waiters.filter { $0.count <= read }.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// The merging stopped (the chain shut down): nobody waits for it any longer.
    func end() {
        let waiting = state.withLock { state in
            state.ended = true
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once the merging has read `count` events in all, or has stopped.
    func wait(untilRead count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.ended || state.read >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}
