import Foundation
import StoreChain
import StoreChainModelFile
import Yams

/// What one decoding of a configuration file shares: the document (for locations), the
/// environment for `${VAR}`, and which keys of each mapping were asked for, so keys nobody asked
/// for are reported as unknown.
final class DecodingSession {
    let document: YAMLDocument
    let environment: [String: String]
    private var mappings: [String: (node: Yams.Node, keys: [(String, Yams.Node)])] = [:]
    private var asked: [String: Set<String>] = [:]
    private var wholeMappings: Set<String> = []

    init(document: YAMLDocument, environment: [String: String]) {
        self.document = document
        self.environment = environment
    }

    func registerMapping(_ path: String, node: Yams.Node, keys: [(String, Yams.Node)]) {
        mappings[path] = (node, keys)
    }

    func ask(_ key: String, in path: String) {
        asked[path, default: []].insert(key)
    }

    /// A mapping read as a dictionary: every key in it is wanted.
    func takeAll(_ path: String) {
        wholeMappings.insert(path)
    }

    /// Keys present under `prefix` that the decoded types never asked for.
    func unknownKeys(under prefix: String) -> [StoreChainError] {
        var problems: [StoreChainError] = []
        for (path, mapping) in mappings.sorted(by: { $0.key < $1.key })
        where (path == prefix || path.hasPrefix(prefix + ".") || path.hasPrefix(prefix + "["))
            && !wholeMappings.contains(path)
        {
            let known = asked[path] ?? []
            let normalized = Set(known.map(Self.normalize))
            for (key, keyNode) in mapping.keys where !known.contains(key) && !normalized.contains(Self.normalize(key)) {
                let names = known.sorted().map(Self.fileName)
                problems.append(
                    StoreChainError(
                        .invalidPipeline, "unknown option '\(key)'",
                        at: document.location(keyNode, path.isEmpty ? key : "\(path).\(key)"),
                        suggestion: Self.suggestion(for: key, among: names)))
            }
        }
        return problems
    }

    private static func suggestion(for key: String, among names: [String]) -> String {
        if names.isEmpty { return "remove it: nothing here takes options" }
        if let match = Suggestion.closest(to: key, in: names) {
            return "did you mean '\(match)'? (options here: \(names.joined(separator: ", ")))"
        }
        return "remove it; the options here are \(names.joined(separator: ", "))"
    }

    /// `maxObjects`, `max-objects` and `max_objects` are the same option.
    static func normalize(_ key: String) -> String {
        ConfigurationDecoding.normalized(key)
    }

    /// A Swift property name as it is written in files: `maxObjects` → `max-objects`.
    static func fileName(_ key: String) -> String {
        ConfigurationDecoding.fileName(key)
    }

    /// Replaces `${NAME}` with the environment's value.
    func substitute(_ text: String, at location: StoreChainError.Location) throws(StoreChainError) -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw StoreChainError(
                    .invalidPipeline, "'${' without a closing '}' in '\(text)'", at: location,
                    suggestion: "write ${NAME} for the environment variable NAME")
            }
            let name = String(rest[start.upperBound..<end])
            guard let value = environment[name] else {
                throw StoreChainError(
                    .invalidPipeline, "the environment variable \(name) is not set", at: location,
                    suggestion: "export \(name)=… before running, or write the value in the file")
            }
            result += value
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
