/// The results of a fetch request as they change: what `ObjectContext.observe(_:)` returns.
///
/// Each iterator runs its own observation: the current result first, then the result again after
/// every change that may affect it, when it differs. The observation stops when the iterator is
/// dropped or its task is cancelled, or when the chain shuts down.
public struct FetchObservation: AsyncSequence, Sendable {
    public typealias Element = [ManagedObject]
    public typealias Failure = any Error

    let start: @Sendable () -> (stream: AsyncThrowingStream<[ManagedObject], any Error>, task: Task<Void, Never>)

    public func makeAsyncIterator() -> Iterator {
        let (stream, task) = start()
        return Iterator(base: stream.makeAsyncIterator(), stopper: Stopper(task))
    }

    /// Gives the observation's results one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[ManagedObject], any Error>.AsyncIterator
        /// Cancels the observation when the last copy of the iterator goes away.
        let stopper: Stopper

        public mutating func next() async throws -> [ManagedObject]? {
            try await base.next(isolation: #isolation)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> [ManagedObject]? {
            try await base.next(isolation: actor)
        }
    }

    /// Ends the observation's work when released: the stream's continuation, held by that work,
    /// would otherwise keep it running (and refetching on every change) for as long as the chain.
    final class Stopper: Sendable {
        let task: Task<Void, Never>

        init(_ task: Task<Void, Never>) {
            self.task = task
        }

        deinit {
            task.cancel()
        }
    }
}
