import StoreChainTesting
import Testing

/// Round 1 removed `@concurrent` after a crash (a null job in `swift_job_run`) seen with
/// `@concurrent` on a witness of a nonisolated(nonsending) protocol requirement, the shape the
/// disk cache's storage now uses. This is that shape reduced, called many times from the main
/// actor through a generic and an existential: it must neither crash nor run the `@concurrent`
/// witness on the main actor, and the plain witness must stay there.
@Suite struct ConcurrentWitnessTests {
    protocol Reader: Sendable {
        func read(_ key: Int) async throws -> Bool
    }

    /// Runs where its caller runs; answers whether that is the main queue.
    final class CallersReader: Reader {
        func read(_ key: Int) async throws -> Bool { MainQueueProbe.isCurrent }
    }

    /// Leaves its caller's executor.
    final class ConcurrentReader: Reader {
        @concurrent func read(_ key: Int) async throws -> Bool { MainQueueProbe.isCurrent }
    }

    final class Holder<R: Reader>: Sendable {
        let reader: R
        init(_ reader: R) { self.reader = reader }
        func read(_ key: Int) async throws -> Bool { try await reader.read(key) }
    }

    private func viaExistential(_ reader: any Reader, _ key: Int) async throws -> Bool {
        try await reader.read(key)
    }

    @MainActor @Test func aConcurrentWitnessLeavesTheMainActorAndComesBack() async throws {
        MainQueueProbe.mark()
        let plain = Holder(CallersReader())
        let concurrent = Holder(ConcurrentReader())
        var wrong: [String] = []
        for key in 0..<20_000 {
            if try await concurrent.read(key) { wrong.append("generic @concurrent ran on main (\(key))") }
            if !MainQueueProbe.isCurrent { wrong.append("not back on main after @concurrent (\(key))") }
            if try await !plain.read(key) { wrong.append("generic plain witness left main (\(key))") }
            if try await viaExistential(ConcurrentReader(), key) { wrong.append("existential @concurrent on main") }
            if try await !viaExistential(CallersReader(), key) { wrong.append("existential plain left main") }
            if wrong.count > 5 { break }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }
}
