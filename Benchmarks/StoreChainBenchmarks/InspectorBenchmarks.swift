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
    for (name, tracing) in [
        ("baseline, memory-cache hit through a chain", nil), ("memory-cache hit through a chain", recorder.tracing),
    ] {
        let memory = MemoryCache(model: hopModel)
        let chain = Chain(
            handlers: [memory], terminal: InMemoryStore(model: hopModel, nodes: bands), tracing: tracing)
        Benchmark("Inspector attached: \(name)", configuration: hits) { benchmark in
            _ = await memory.storage.write(write)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try await chain.send(band42)) }
        }
    }
}
