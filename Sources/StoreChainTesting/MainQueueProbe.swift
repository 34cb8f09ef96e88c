import Dispatch

/// Tells whether code runs on the main queue, the main actor's executor: for tests that check
/// that work leaves the caller's executor (a disk read, a custom storage's I/O) or stays on it
/// (a memory-cache hit).
///
/// ```swift
/// @MainActor @Test func myStorageLeavesTheMainActor() async throws {
///     MainQueueProbe.mark()
///     // … a storage that records `MainQueueProbe.isCurrent` where it does its I/O …
/// }
/// ```
public enum MainQueueProbe {
    private static let key = DispatchSpecificKey<Bool>()

    /// Marks the main queue so that `isCurrent` can recognize it; call it from the main actor
    /// before probing (again is harmless).
    @MainActor public static func mark() {
        DispatchQueue.main.setSpecific(key: key, value: true)
    }

    /// Whether the code calling this runs on the (marked) main queue.
    public static var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) == true
    }
}
