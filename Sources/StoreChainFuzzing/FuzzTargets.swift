extension FuzzTarget {
    /// The targets of the core fuzzer (`storechain-fuzz`): they need only the StoreChain module,
    /// so they build in a minute with fuzzing instrumentation.
    public static let coreTargets: [FuzzTarget] = [.predicate, .records]
}
