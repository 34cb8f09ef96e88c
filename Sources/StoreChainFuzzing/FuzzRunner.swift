import Foundation
import StoreChain

/// What a fuzzer executable's `LLVMFuzzerTestOneInput` does: check one input with the target
/// chosen by `STORECHAIN_FUZZ_TARGET`, and abort with the finding (libFuzzer then saves the
/// input) when the target's promise is broken.
public enum FuzzRunner {
    private static let chosen = Locked<FuzzTarget?>(nil)

    public static func run(_ input: UnsafeRawBufferPointer, among targets: [FuzzTarget]) -> CInt {
        let target = chosen.withLock { chosen in
            if let chosen { return chosen }
            switch FuzzTarget.selected(among: targets) {
            case .success(let target):
                chosen = target
                return target
            case .failure(let error):
                FileHandle.standardError.write(Data("storechain-fuzz: \(error)\n".utf8))
                exit(2)
            }
        }
        if let finding = target.checkBlocking(Array(input)) {
            FileHandle.standardError.write(Data("storechain-fuzz: \(target.name): \(finding)\n".utf8))
            abort()
        }
        return 0
    }
}
