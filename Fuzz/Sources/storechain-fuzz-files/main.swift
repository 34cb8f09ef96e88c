// The libFuzzer entry point for the file targets (model file, pipeline file, remote records).
// Build and run it with Scripts/fuzz.sh; choose a target with STORECHAIN_FUZZ_TARGET. Without
// `--sanitize=fuzzer` this builds to a program that does nothing: only declarations are here,
// because a fuzzer build compiles this file as a library and libFuzzer supplies `main`.
import StoreChainFileFuzzing
import StoreChainFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzRunner.run(UnsafeRawBufferPointer(start: start, count: count), among: FuzzTarget.fileTargets)
}
