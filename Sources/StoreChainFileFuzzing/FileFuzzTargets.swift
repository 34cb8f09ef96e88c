import StoreChainFuzzing

extension FuzzTarget {
    /// The targets of the files fuzzer (`storechain-fuzz-files`).
    public static let fileTargets: [FuzzTarget] = [.modelFile, .pipeline, .remoteRecords]
}
