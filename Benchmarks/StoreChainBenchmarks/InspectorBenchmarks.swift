import Benchmark
import Foundation
import StoreChain
import StoreChainInspector

/// A memory-cache hit through a whole chain, with and without an inspector attached (its
/// recorder as the chain's tracing): the inspector keeps a summary of each request the app
/// makes and traces in full only what its console runs; the target is at most 1.5×.
func inspectorBenchmarks() {
    let hits = Benchmark.Configuration(scalingFactor: .kilo)
    let bands: [Node] = (0..<100).map {
        Node(
            id: ObjectID(entity: "Band", key: .integer($0)),
            attributes: ["id": .integer($0), "name": .string("Band \($0)")],
            freshness: Freshness(expiresAt: .distantFuture))
    }
    var write = CacheWrite()
    write.nodes = bands
    let band42 = StoreRequest.objectFault(ObjectID(entity: "Band", key: 42))
    let recorder = InspectorRecorder()
    let chains = [nil, recorder.tracing].map { tracing in
        let memory = MemoryCache(model: hopModel)
        let chain = Chain(
            handlers: [memory], terminal: InMemoryStore(model: hopModel, nodes: bands), tracing: tracing)
        return (memory, chain)
    }
    for ((memory, chain), name) in zip(
        chains, ["baseline, memory-cache hit through a chain", "memory-cache hit through a chain"])
    {
        Benchmark("Inspector attached: \(name)", configuration: hits) { benchmark in
            _ = await memory.storage.write(write)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try await chain.send(band42)) }
        }
    }
    // The same two chains measured in alternation: each sample times 1,000 hits through each,
    // one right after the other (in turn first), and records their ratio. Measured as two
    // benchmarks, one after the other, the ratio moved between 1.1 and 1.9 from run to run on
    // this machine (its speed drifts over seconds by as much as the inspector costs); within
    // a sample both sides see the same machine.
    let alternating = Benchmark.Configuration(
        metrics: [inspectorRatio], warmupIterations: 10, maxDuration: .seconds(3), maxIterations: 2_000)
    Benchmark("Inspector attached: ratio to a hit without it, measured alternately", configuration: alternating) {
        benchmark in
        for (memory, _) in chains { _ = await memory.storage.write(write) }
        let clock = ContinuousClock()
        var first = 0
        for _ in benchmark.scaledIterations {
            var took: [Duration] = [.zero, .zero]
            for side in [first, 1 - first] {
                let chain = chains[side].1
                let start = clock.now
                for _ in 0..<1_000 { blackHole(try await chain.send(band42)) }
                took[side] = clock.now - start
            }
            first = 1 - first
            benchmark.measurement(inspectorRatio, Int((took[1] / took[0] * 1_000).rounded()))
        }
    }
}

/// The ratio of a hit with the inspector attached to one without, in thousandths.
let inspectorRatio = BenchmarkMetric.custom("ratio-per-mille", polarity: .prefersSmaller, useScalingFactor: false)
