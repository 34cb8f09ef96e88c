import Foundation
import StoreChain

/// An observation a context of the object-graph test holds (`ObjectContext.observe`): the
/// results it delivered, in order, gathered by a task of its own while the steps go on.
final class GraphObservation: Sendable {
    /// What the observing task gathers.
    private final class Gathered: Sendable {
        let delivered = Locked<[[ObjectID]]>([])
        let failure = Locked<String?>(nil)
    }

    let request: FetchRequest
    private let gathered = Gathered()
    private let task: Task<Void, Never>

    init(_ request: FetchRequest, in context: ObjectContext) {
        self.request = request
        let gathered = self.gathered
        task = Task {
            do {
                for try await objects in context.observe(request) {
                    gathered.delivered.withLock { $0.append(objects.map(\.objectID)) }
                }
            } catch {
                gathered.failure.withLock { $0 = "\(error)" }
            }
        }
    }

    func stop() {
        task.cancel()
    }

    /// What it delivered so far.
    var values: [[ObjectID]] { gathered.delivered.withLock { $0 } }

    /// Waits until the latest result it delivered is `expected` (at once when it is already),
    /// and returns every result delivered after the first `seen`, waiting by yielding (the
    /// refetch is work in flight, not time passing). With an error when the observation failed,
    /// or delivered nothing right within 20 s of wall time: a hang the test reports rather than
    /// waits out.
    func waitFor(_ expected: [ObjectID], after seen: Int) async -> (results: [[ObjectID]], error: String?) {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while true {
            let values = self.values
            if values.last == expected { return (Array(values.dropFirst(seen)), nil) }
            if let error = gathered.failure.withLock({ $0 }) { return (Array(values.dropFirst(seen)), error) }
            if clock.now >= deadline {
                return (Array(values.dropFirst(seen)), "no result equal to the reference within 20 s")
            }
            await Task.yield()
        }
    }
}
