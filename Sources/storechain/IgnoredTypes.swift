import ArgumentParser
import StoreChain
import StoreChainPipeline

/// `--ignore-type NAME`: handler types the app registers itself, which the commands cannot build.
/// Each is passed through (requests go on to the next handler) and its options are not checked,
/// so a pipeline with an app's own handler can be checked, queried, inspected and watched.
struct IgnoredTypes: ParsableArguments {
    @Option(
        name: .customLong("ignore-type"),
        help: "A handler type the app registers itself (repeatable): passed through, its options not checked.")
    var names: [String] = []

    /// The standard registry, with each ignored type as a pass-through.
    var registry: HandlerRegistry {
        var registry = HandlerRegistry.standard
        for type in names {
            registry.register(type, options: AnyOptions.self) { _, _ in PassThrough(name: type) }
        }
        return registry
    }
}

/// Options of an ignored type: anything is accepted.
private struct AnyOptions: Decodable, Sendable {
    init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: ConfigurationDecoding.AnyKey.self) {
            _ = container.allKeys
        }
    }
}

/// Stands in for an ignored handler type.
private struct PassThrough: StoreHandler {
    let name: String

    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        try await next(request, context)
    }
}
