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
            A file with top-level 'entities' is a model file; any other is a pipeline file. \
            Pipelines are checked without opening the cache files they name; environment \
            variables they use must be set (or given with --env). Handler types an app registers \
            itself can be named with --ignore-type: their options are then not checked.
            """
    )

    @Argument(help: "Pipeline and model files (YAML or JSON).")
    var files: [String]

    @Option(name: .customLong("env"), help: "NAME=VALUE for ${NAME} in the files (repeatable).")
    var variables: [String] = []

    @OptionGroup var ignored: IgnoredTypes

    func run() throws {
        var environment = ProcessInfo.processInfo.environment
        for variable in variables {
            let parts = variable.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--env takes NAME=VALUE, not '\(variable)'") }
            environment[parts[0]] = parts[1]
        }
        let registry = ignored.registry
        var failed = false
        for file in files {
            let problems = FileValidator.problems(in: URL(filePath: file), registry: registry, environment: environment)
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
