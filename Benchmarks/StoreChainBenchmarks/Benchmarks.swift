import Benchmark
import StoreChain

/// Each measurement has a baseline measured in the same run; `Scripts/benchmark-ratios.py`
/// prints the ratios. Names are "<group>: <subject>" and "<group>: baseline <what>".
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(3), maxIterations: 10_000)
    predicateBenchmarks()
    chainBenchmarks()
    mappingBenchmarks()
    cacheBenchmarks()
    relationshipFaultBenchmarks()
    trafficBenchmarks()
    scaleBenchmarks()
    diskWriteBenchmarks()
    memoryBenchmarks()
    outboxBenchmarks()
    changeFeedBenchmarks()
    inspectorBenchmarks()
}
