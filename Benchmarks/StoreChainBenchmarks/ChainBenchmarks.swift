import Benchmark
import StoreChain

/// A call that only forwards to the next, chosen at run time: what a hop costs at the least.
private protocol Forwarding: Sendable {
    func forward(_ request: StoreRequest, context: RequestContext) async throws -> StoreResponse
}

private struct ForwardingLink: Forwarding {
    let next: any Forwarding

    func forward(_ request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        try await next.forward(request, context: context)
    }
}

private struct ForwardingEnd: Forwarding {
    func forward(_ request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        try await hopStore.respond(to: request, context: context)
    }
}

/// A handler that only forwards: the cost of one hop.
private struct PassThrough: StoreHandler {
    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        try await next(request, context)
    }
}

/// Bands with a key and a name: the model the chain and cache benchmarks share.
let hopModel: ObjectModel = {
    do {
        return try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
    } catch {
        fatalError("benchmark model is invalid: \(error)")
    }
}()

private let hopStore = InMemoryStore(
    model: hopModel,
    nodes: (0..<100).map {
        Node(
            id: ObjectID(entity: "Band", key: .integer($0)),
            attributes: ["id": .integer($0), "name": .string("Band \($0)")])
    })
private let hopRequest = StoreRequest.objectFault(ObjectID(entity: "Band", key: 42))

private func chain(_ handlers: Int) -> Chain {
    Chain(handlers: Array(repeating: PassThrough(), count: handlers), terminal: hopStore)
}

private let contextStore: InMemoryStore = {
    let nodes = (0..<10_000).map { index in
        Node(
            id: ObjectID(entity: "Band", key: .integer(index)),
            attributes: ["id": .integer(index), "name": .string("Band \(index)")])
    }
    return InMemoryStore(model: hopModel, nodes: nodes)
}()

/// A benchmark handed to the main actor, so the measurement starts and stops there.
///
/// `@unchecked Sendable`: `Benchmark` is a class that is not `Sendable`; the closure that owns it
/// awaits the main-actor call it is handed to and does not touch it meanwhile, so it is never
/// used from two places at once.
struct MeasuredBenchmark: @unchecked Sendable {
    let benchmark: Benchmark
}

/// Calls `send` once per scaled iteration from the main actor, as an app's UI code would,
/// measuring the calls alone: the hop to the main actor and back happens outside the measurement,
/// as it happens once per batch here and not once per call in an app.
@MainActor
func sendFromMainActor(_ measured: MeasuredBenchmark, _ send: () async throws -> StoreResponse) async throws {
    // `sendFromTask` runs on its caller's executor: the main actor, here.
    try await sendFromTask(measured.benchmark, send)
}

/// The same calls as `sendFromMainActor`, from the calling task: the two differ only in the
/// executor they run on.
func sendFromTask(_ benchmark: Benchmark, _ send: () async throws -> StoreResponse) async throws {
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { blackHole(try await send()) }
    benchmark.stopMeasurement()
}

func chainBenchmarks() {
    let context = RequestContext()
    // A thousand calls per measured iteration, so the timer's own cost does not dominate.
    let hops = Benchmark.Configuration(scalingFactor: .kilo)
    Benchmark("Hop: baseline direct terminal call", configuration: hops) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try await hopStore.respond(to: hopRequest, context: context)) }
    }
    for count in [0, 1, 5, 10] {
        let chain = chain(count)
        let chainContext = chain.makeContext()
        Benchmark("Hop: chain of \(count) pass-through handlers", configuration: hops) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try await chain.send(hopRequest, context: chainContext)) }
        }
    }
    // The least a chain of none can cost: its terminal is chosen at run time, so the call to it
    // goes through an existential, one async call more than the baseline's direct call.
    let end: any Forwarding = ForwardingEnd()
    Benchmark("Hop: floor, 1 async call through an existential", configuration: hops) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try await end.forward(hopRequest, context: context)) }
    }
    // The least ten hops can cost when each calls the next through an existential, as a chain's
    // handlers are chosen at run time: ten nested async calls, no chain around them.
    let nested = (0..<10).reduce(ForwardingEnd() as any Forwarding) { next, _ in ForwardingLink(next: next) }
    Benchmark("Hop: floor, 10 nested async calls through existentials", configuration: hops) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try await nested.forward(hopRequest, context: context)) }
    }
    let five = chain(5)
    let fiveContext = five.makeContext()
    Benchmark("Hop from main actor: chain of 5 pass-through handlers", configuration: hops) { benchmark in
        try await sendFromMainActor(MeasuredBenchmark(benchmark: benchmark)) {
            try await five.send(hopRequest, context: fiveContext)
        }
    }
    Benchmark("Hop from main actor: baseline direct terminal call", configuration: hops) { benchmark in
        try await sendFromMainActor(MeasuredBenchmark(benchmark: benchmark)) {
            try await hopStore.respond(to: hopRequest, context: context)
        }
    }

    let configuration = Benchmark.Configuration(maxDuration: .seconds(5), maxIterations: 100)
    let contextChain = Chain(handlers: [], terminal: contextStore)
    Benchmark("Context 10k: fetch and read through ObjectContext", configuration: configuration) { benchmark in
        let objectContext = ObjectContext(chain: contextChain, model: hopModel)
        benchmark.startMeasurement()
        var total = 0
        for object in try await objectContext.fetch(FetchRequest(entity: "Band")) {
            if case .string(let name) = try await object.value("name") { total += name.utf8.count }
        }
        blackHole(total)
    }
    Benchmark("Context 10k: baseline fetch and read from InMemoryStore", configuration: configuration) { benchmark in
        var total = 0
        guard case .objects(let nodes) = try contextStore.fetch(FetchRequest(entity: "Band")) else { return }
        for node in nodes {
            if case .string(let name)? = node.attributes["name"] { total += name.utf8.count }
        }
        blackHole(total)
    }
    // What any context that hands out one object per ID must do beyond the baseline, and no more:
    // keep each row, index it by ID, make an object per row held weakly, read, free it all.
    Benchmark("Context 10k: floor, a bare table of rows and weakly held objects", configuration: configuration) {
        benchmark in
        guard case .objects(let nodes) = try contextStore.fetch(FetchRequest(entity: "Band")) else { return }
        var slots: [ObjectID: Int] = [:]
        var entries: [FloorEntry] = []
        var objects: [FloorObject] = []
        slots.reserveCapacity(nodes.count)
        entries.reserveCapacity(nodes.count)
        objects.reserveCapacity(nodes.count)
        for node in nodes {
            let object = FloorObject(id: node.id, slot: entries.count)
            slots[node.id] = entries.count
            entries.append(FloorEntry(row: node, object: object))
            objects.append(object)
        }
        var total = 0
        for object in objects {
            if case .string(let name)? = entries[object.slot].row.attributes["name"] { total += name.utf8.count }
        }
        blackHole(total)
        blackHole(slots)
    }
}

/// The floor benchmark's object: an ID and where its row is.
private final class FloorObject {
    let id: ObjectID
    let slot: Int

    init(id: ObjectID, slot: Int) {
        self.id = id
        self.slot = slot
    }
}

/// The floor benchmark's table entry: the row and the object, held weakly.
private struct FloorEntry {
    var row: Node
    weak var object: FloorObject?
}
