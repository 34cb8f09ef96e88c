import ArgumentParser
import Foundation
import StoreChain
import StoreChainPipeline

/// `storechain validate`: checks pipeline and model files; the exit code says whether all are
/// valid, for CI.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check pipeline and model files; exits non-zero when any has a problem.",
        discussion: """
            A file with top-level 'entities' is a model file; any other is a pipeline file. Pipelines
            are checked without opening the cache files they name; environment variables they use
            must be set.
            """
    )

    @Argument(help: "Pipeline and model files (YAML or JSON).")
    var files: [String]

    func run() throws {
        var failed = false
        for file in files {
            let problems = FileValidator.problems(in: URL(filePath: file))
            if problems.isEmpty {
                print("ok: \(file)")
            } else {
                failed = true
                for problem in problems { Output.standardError("error: \(problem)") }
                Output.standardError("\(file): \(problems.count) problem(s)")
            }
        }
        if failed { throw ExitCode.failure }
    }
}
