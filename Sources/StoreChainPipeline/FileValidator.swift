import Foundation
import StoreChain
import StoreChainModelFile
import Yams

/// Checks model and pipeline files, telling them apart by their top-level keys: a file with
/// `entities` and no `terminal` is a model file.
public enum FileValidator {
    /// Every problem in the file; none when it is valid.
    public static func problems(
        in url: URL, registry: HandlerRegistry = .standard,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [StoreChainError] {
        let text: String
        do {
            text = try YAMLDocument.text(at: url, what: "the file")
        } catch {
            return [error]
        }
        let keys: Set<String>
        do {
            let document = try YAMLDocument(text: text, source: url.relativePath)
            if case .mapping(let mapping)? = document.root {
                keys = Set(mapping.keys.compactMap(\.scalar?.string))
            } else {
                keys = []
            }
        } catch {
            return [error]
        }
        if keys.contains("entities"), !keys.contains("terminal") {
            do {
                _ = try ModelFile.parse(text, source: url.relativePath)
                return []
            } catch {
                return error.errors
            }
        }
        return Pipeline.validate(contentsOf: url, registry: registry, environment: environment)
    }
}
