#if STORECHAIN_TSAN
    import Foundation

    /// A value behind a lock, as `Synchronization.Mutex` but visible to ThreadSanitizer.
    ///
    /// On Linux, `Mutex` locks with futex system calls that ThreadSanitizer does not intercept, so
    /// it reports every access a `Mutex` protects as a race. Builds for
    /// `swift test --sanitize=thread` pass `-DSTORECHAIN_TSAN` (see `Scripts/reliability.sh`) and get
    /// this pthread-based lock instead; every other build uses `Mutex` itself.
    package final class Locked<Value: ~Copyable>: @unchecked Sendable {
        // Sendable is sound: `value` is read and written only inside `withLock`, with `lock` held.
        private let lock = NSLock()
        private var value: Value

        package init(_ initialValue: consuming Value) {
            value = initialValue
        }

        package func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E)
            -> Result
        {
            lock.lock()
            defer { lock.unlock() }
            return try body(&value)
        }
    }
#else
    import Synchronization

    /// A value behind a lock: `Synchronization.Mutex`, except in ThreadSanitizer builds (see the
    /// `STORECHAIN_TSAN` branch of this file).
    package typealias Locked<Value: ~Copyable> = Mutex<Value>
#endif
