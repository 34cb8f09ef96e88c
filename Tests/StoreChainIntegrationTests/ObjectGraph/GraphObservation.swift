import Foundation
import StoreChain

/// An observation a context of the object-graph test holds (`ObjectContext.observe`): the
/// results it delivered, in order, gathered by a task of its own while the steps go on.
final class GraphObservation: Sendable {
    /// What the observing task gathers.
    private struct Gathered: Sendable {
        var delivered: [[ObjectID]] = []
        var failure: String?
    }

    let request: FetchRequest
    private let gathered = Watched(Gathered())
    private let task: Task<Void, Never>

    init(_ request: FetchRequest, in context: ObjectContext) {
        self.request = request
        let gathered = self.gathered
        task = Task {
            do {
                for try await objects in context.observe(request) {
                    gathered.withLock { $0.delivered.append(objects.map(\.objectID)) }
                }
            } catch {
                gathered.withLock { $0.failure = "\(error)" }
            }
        }
    }

    func stop() {
        task.cancel()
    }

    /// What it delivered so far.
    var values: [[ObjectID]] { gathered.value.delivered }

    /// Waits until the latest result it delivered is `expected` (at once when it is already),
    /// woken by each result it delivers, and returns every result delivered after the first
    /// `seen`. With an error when the observation failed, or delivered nothing right within 20 s
    /// of wall time: a hang the test reports rather than waits out.
    func waitFor(_ expected: [ObjectID], after seen: Int) async -> (results: [[ObjectID]], error: String?) {
        var timedOut: String?
        do {
            try await gathered.wait(for: "a result equal to the reference", timeout: .seconds(20)) {
                $0.delivered.last == expected || $0.failure != nil
            }
        } catch {
            timedOut = "no result equal to the reference within 20 s"
        }
        let now = gathered.value
        let results = Array(now.delivered.dropFirst(seen))
        if now.delivered.last == expected { return (results, nil) }
        return (results, now.failure ?? timedOut)
    }
}
