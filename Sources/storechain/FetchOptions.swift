import ArgumentParser
import Foundation
import StoreChain
import StoreChainPipeline

/// The fetch request options `query` and `explain` share.
struct FetchOptions: ParsableArguments {
    @Option(help: "The entity to fetch.")
    var entity: String

    @Option(name: .customLong("where"), help: "A predicate in NSPredicate syntax.")
    var predicate: String?

    // `.unconditional`: `--sort -year` is a descending sort, not an unknown option `-year`.
    @Option(parsing: .unconditional, help: "Sort keys, comma-separated: KEY, -KEY (descending), KEY[c] (ignore case).")
    var sort: String?

    @Option(help: "Return at most this many objects.")
    var limit: Int?

    @Option(help: "Skip this many objects first.")
    var offset: Int = 0

    /// The fetch request these options describe; errors name the flag at fault.
    func request() throws(StoreChainError) -> FetchRequest {
        var request = FetchRequest(entity: entity, fetchLimit: limit, fetchOffset: offset)
        if let predicate {
            do {
                request.predicate = try FetchPredicate(format: predicate)
            } catch {
                throw error.located(.init(path: "--where"))
            }
        }
        if let sort {
            request.sortDescriptors = try sort.split(separator: ",").map { text throws(StoreChainError) in
                try FetchSortDescriptor(parsing: String(text))
            }
        }
        return request
    }
}

/// `--pipeline FILE`, loaded with every problem reported.
struct PipelineOption: ParsableArguments {
    @Option(help: "A pipeline file (YAML or JSON) describing the chain.")
    var pipeline: String

    @OptionGroup var ignored: IgnoredTypes

    func load() throws(ValidationFailure) -> Pipeline {
        try Pipeline.load(contentsOf: URL(filePath: pipeline), registry: ignored.registry)
    }

    /// The pipeline's handlers of type `H` (scoped or not), or an error saying which line to add.
    func handlers<H>(of type: H.Type, in pipeline: Pipeline, named name: String, example: String)
        throws(StoreChainError)
        -> [H]
    {
        let found = pipeline.handlers.handlers(of: H.self)
        guard !found.isEmpty else {
            throw StoreChainError(
                .invalidRequest, "\(self.pipeline) has no \(name) handler",
                suggestion: "add '- \(name): \(example)' to its handlers")
        }
        return found
    }
}
