import ArgumentParser
import Foundation
import StoreChain

/// Writing to standard output and standard error.
enum Output {
    static func standardError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Runs a command's work; an error is reported on stderr (`report`) and the command exits
    /// with a failure status.
    static func reportingFailure(predicateText: String? = nil, _ work: () async throws -> Void) async throws {
        do {
            try await work()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            report(error, predicateText: predicateText)
            throw ExitCode.failure
        }
    }

    /// Reports an error on stderr; for predicate syntax errors, points at the character.
    static func report(_ error: any Error, predicateText: String? = nil) {
        switch error {
        case let failure as ValidationFailure:
            for problem in failure.errors { standardError("error: \(problem)") }
        case let problem as StoreChainError:
            standardError("error: \(problem)")
            if problem.code == .predicateSyntax, let predicateText, let offset = problem.location?.offset {
                standardError("  " + predicateText)
                standardError("  " + String(repeating: " ", count: offset) + "^")
            }
        default:
            standardError("error: \(error)")
        }
    }
}
