/// A value kept out of line, behind one reference: a struct that holds a large value it rarely
/// sets (a response's freshness rules) stays small, so the hot path copies a pointer instead of
/// the whole value. Immutable once made: setting a new value makes a new box, so copies of the
/// holder never share changes.
struct OutOfLine<Value: Sendable & Hashable>: Sendable, Hashable {
    private final class Storage: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private let storage: Storage

    init(_ value: Value) {
        storage = Storage(value)
    }

    var value: Value { storage.value }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.storage === rhs.storage || lhs.value == rhs.value
    }

    func hash(into hasher: inout Hasher) {
        value.hash(into: &hasher)
    }
}
