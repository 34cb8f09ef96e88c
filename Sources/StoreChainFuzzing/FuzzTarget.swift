import Foundation

/// One fuzz target: code that must accept any bytes and either succeed or throw a clear, typed
/// error. `check` returns a finding (a broken promise, described) or `nil`; a crash is a finding
/// too. The fuzzer executables (`storechain-fuzz`, `storechain-fuzz-files`) run targets under
/// libFuzzer, and the regression tests replay the committed corpus through the same `check`.
public struct FuzzTarget: Sendable {
    /// The name the scripts and `STORECHAIN_FUZZ_TARGET` use (`predicate`).
    public let name: String
    public let check: @Sendable ([UInt8]) async -> String?

    public init(name: String, check: @escaping @Sendable ([UInt8]) async -> String?) {
        self.name = name
        self.check = check
    }

    /// The target named by `STORECHAIN_FUZZ_TARGET` among `targets`, or `nil` with the reason.
    public static func selected(
        among targets: [FuzzTarget], environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Result<FuzzTarget, FuzzSelectionError> {
        let names = targets.map(\.name).joined(separator: ", ")
        guard let name = environment["STORECHAIN_FUZZ_TARGET"] else {
            return .failure(FuzzSelectionError(message: "set STORECHAIN_FUZZ_TARGET to one of: \(names)"))
        }
        guard let target = targets.first(where: { $0.name == name }) else {
            return .failure(FuzzSelectionError(message: "no fuzz target '\(name)' here; choose one of: \(names)"))
        }
        return .success(target)
    }

    /// Runs `check` to completion from synchronous code on a thread that is not one of Swift
    /// concurrency's own (libFuzzer's thread): blocking a pool thread could starve the task.
    public func checkBlocking(_ bytes: [UInt8]) -> String? {
        let finding = FindingBox()
        let done = DispatchSemaphore(value: 0)
        let check = self.check
        Task.detached {
            finding.set(await check(bytes))
            done.signal()
        }
        done.wait()
        return finding.value
    }
}

/// Why no target was chosen.
public struct FuzzSelectionError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
