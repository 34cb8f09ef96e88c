/// Values that live as long as one request to the chain and are shared by the requests a
/// handler makes for it (the pages of a fetch, say), so work done for one is not repeated for
/// the next.
///
/// ```swift
/// let memo = context[RequestScopeKey.self]?.value(of: MyMemo.self) { MyMemo() } ?? MyMemo()
/// ```
///
/// A scope holds what work the requests share, never what a request means: that is in the
/// request's type.
public final class RequestScope: Sendable {
    private let values = Locked<[ObjectIdentifier: any Sendable]>([:])

    public init() {}

    /// The scope's value of type `type`, made by `make` the first time it is asked for.
    public func value<Value: Sendable>(of type: Value.Type, default make: () -> Value) -> Value {
        values.withLock { values in
            if let value = values[ObjectIdentifier(type)] as? Value { return value }
            let value = make()
            values[ObjectIdentifier(type)] = value
            return value
        }
    }
}

/// The scope of the request a handler splits into several (see `RequestScope`).
public enum RequestScopeKey: RequestContextKey {
    public typealias Value = RequestScope
}
