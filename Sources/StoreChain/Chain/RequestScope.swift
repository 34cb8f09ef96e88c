/// Values that live as long as one request to the chain and are shared by the requests a
/// handler makes for it (the pages of a fetch, say), so work done for one is not repeated for
/// the next.
///
/// ```swift
/// let memo = context[RequestScopeKey.self]?.value(MyMemoKey.self) { MyMemo() } ?? MyMemo()
/// ```
public final class RequestScope: Sendable {
    private let values = Locked<[ObjectIdentifier: any Sendable]>([:])

    public init() {}

    /// The scope's value for `key`, made by `make` the first time it is asked for.
    public func value<Key: RequestContextKey>(_ key: Key.Type, default make: () -> Key.Value) -> Key.Value {
        values.withLock { values in
            if let value = values[ObjectIdentifier(key)] as? Key.Value { return value }
            let value = make()
            values[ObjectIdentifier(key)] = value
            return value
        }
    }
}

/// The scope of the request a handler splits into several (see `RequestScope`).
public enum RequestScopeKey: RequestContextKey {
    public typealias Value = RequestScope
}
