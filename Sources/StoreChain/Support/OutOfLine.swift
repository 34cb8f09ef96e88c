/// A value kept out of line, behind one reference: a struct that holds a large value it rarely
/// sets (a response's freshness rules) stays small, so the hot path copies a pointer instead of
/// the whole value. Immutable once made: setting a new value makes a new box, so copies of the
/// holder never share changes.
package struct OutOfLine<Value: Sendable & Hashable>: Sendable, Hashable {
    private final class Storage: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private let storage: Storage

    package init(_ value: Value) {
        storage = Storage(value)
    }

    package var value: Value { storage.value }

    /// Whether both hold their value in the same box (not merely equal values).
    package func isSameBox(as other: Self) -> Bool {
        storage === other.storage
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.storage === rhs.storage || lhs.value == rhs.value
    }

    package func hash(into hasher: inout Hasher) {
        value.hash(into: &hasher)
    }
}
