import StoreChain

/// A finding handed from the task that checked an input to the thread waiting for it.
final class FindingBox: Sendable {
    private let storage = Locked<String?>(nil)

    func set(_ finding: String?) {
        storage.withLock { $0 = finding }
    }

    var value: String? {
        storage.withLock { $0 }
    }
}
