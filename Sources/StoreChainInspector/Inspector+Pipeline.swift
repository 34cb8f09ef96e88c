import Foundation
import StoreChain
import StoreChainPipeline

extension Inspector {
    /// The chain as the page draws it: each handler in order with its scope and, from a
    /// pipeline file, the lines that configure it (secrets redacted); then the terminal.
    struct PipelineView: Codable {
        struct Stage: Codable {
            var type: String
            var name: String
            var line: Int?
            var kinds: [String]?
            var entities: [String]?
            var text: String
        }

        var source: String?
        var stages: [Stage]
        var terminal: Stage
    }

    func pipelineView() -> PipelineView {
        let lines =
            pipeline.flatMap { try? String(contentsOfFile: $0.source, encoding: .utf8) }?
            .components(separatedBy: "\n") ?? []
        let starts = pipeline?.stages.map(\.line) ?? []
        var stages: [PipelineView.Stage] = []
        for (index, handler) in chain.handlers.enumerated() {
            let scope = handler.scope
            let line = index < starts.count ? starts[index] : nil
            stages.append(
                PipelineView.Stage(
                    type: pipeline.map { index < $0.stages.count ? $0.stages[index].type : handler.name }
                        ?? handler.name,
                    name: handler.name, line: line, kinds: scope?.kinds.map { $0.map(\.rawValue).sorted() },
                    entities: scope?.entities.map { $0.sorted() },
                    text: Self.excerpt(of: lines, from: line, until: index + 1 < starts.count ? starts[index + 1] : nil)
                ))
        }
        let terminalLine = lines.firstIndex { $0.hasPrefix("terminal:") }.map { $0 + 1 }
        let terminal = PipelineView.Stage(
            type: pipeline?.terminalType ?? chain.terminal.name, name: chain.terminal.name, line: terminalLine,
            text: Self.excerpt(of: lines, from: terminalLine, until: nil))
        return PipelineView(source: pipeline?.source, stages: stages, terminal: terminal)
    }

    /// The lines of a file from `line` (1-based) to before `until` or the next top-level key,
    /// with the values of secret-looking keys replaced by dots.
    static func excerpt(of lines: [String], from line: Int?, until next: Int?) -> String {
        guard let line, line >= 1, line <= lines.count else { return "" }
        var taken: [String] = []
        for (offset, text) in lines[(line - 1)...].enumerated() {
            if let next, line + offset >= next { break }
            if offset > 0, let first = text.first, !first.isWhitespace, first != "#" { break }
            taken.append(redacted(text))
        }
        while let last = taken.last, last.trimmingCharacters(in: .whitespaces).isEmpty { taken.removeLast() }
        return taken.joined(separator: "\n")
    }

    /// A line whose key names a secret (token, password, secret, authorization, api key) keeps
    /// its key only.
    static func redacted(_ line: String) -> String {
        let lowered = line.lowercased()
        guard ["token", "password", "secret", "authorization", "api-key", "apikey"].contains(where: lowered.contains),
            let colon = line.firstIndex(of: ":")
        else { return line }
        return line[...colon] + " •••"
    }
}
