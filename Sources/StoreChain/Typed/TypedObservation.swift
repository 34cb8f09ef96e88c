/// The results of a typed fetch as they change: what `TypedObject.observe(_:…)` returns. It
/// emits only when the result differs, as `FetchObservation` does.
public struct TypedObservation<Object: TypedObject>: AsyncSequence, Sendable {
    public typealias Element = [Object]
    public typealias Failure = any Error

    /// The untyped observation underneath.
    public let observation: FetchObservation

    /// The typed view of `observation`.
    public init(_ observation: FetchObservation) {
        self.observation = observation
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: observation.makeAsyncIterator())
    }

    /// Gives the observation's results one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var base: FetchObservation.Iterator

        public mutating func next() async throws -> [Object]? {
            try await base.next(isolation: #isolation)?.compactMap(Object.init)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> [Object]? {
            try await base.next(isolation: actor)?.compactMap(Object.init)
        }
    }

    /// The current result, once.
    public func first() async throws -> [Object] {
        try await observation.first().compactMap(Object.init)
    }

    /// The same results, failing with `timed-out` when none comes within `limit` (see
    /// `FetchObservation.timeout(_:clock:)`).
    public func timeout(_ limit: Duration, clock: any StoreClock = SystemClock()) -> Self {
        Self(observation.timeout(limit, clock: clock))
    }
}
