/// Values worked out once per key and kept: at most `capacity`, all dropped when full (an app
/// makes a bounded set of distinct fetches; one that makes more works out again what it drops).
/// The plans of fetch requests are kept this way (`FetchPlanMemo`, `CachePlans`).
final class KeptValues<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let values = Locked<[Key: Value]>([:])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// How many are kept.
    var count: Int { values.withLock { $0.count } }

    /// The value of `key`, made by `make` unless kept (a key whose value fails to make is not).
    func value(for key: Key, make: () throws(StoreChainError) -> Value) throws(StoreChainError) -> Value {
        if let kept = values.withLock({ $0[key] }) { return kept }
        let value = try make()
        values.withLock { values in
            if values.count >= capacity { values.removeAll(keepingCapacity: true) }
            values[key] = value
        }
        return value
    }
}
