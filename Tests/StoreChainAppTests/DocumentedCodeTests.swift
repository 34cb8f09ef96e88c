import Foundation
import Testing

/// Every Swift code block in README.md, Docs/, Examples/*/README.md and Plugins/README.md is one
/// of the regions of `Snippets/`, which this target compiles: a documented example that stops
/// compiling fails the build, and one edited in the docs but not here fails this test. Package
/// manifest fragments (a block starting `// Package.swift`) are the only exception.
@Suite struct DocumentedCodeTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    struct Block: CustomStringConvertible {
        let file: String
        let line: Int
        let text: String
        var description: String { "\(file):\(line)" }
    }

    static func documents() throws -> [URL] {
        var files = ["README.md", "Plugins/README.md", "Examples/README.md"].map { root.appending(path: $0) }
        let manager = FileManager.default
        for folder in ["Docs", "Examples"] {
            for name in try manager.contentsOfDirectory(atPath: root.appending(path: folder).path).sorted() {
                let url = root.appending(path: folder).appending(path: name)
                if name.hasSuffix(".md") { files.append(url) }
                let readme = url.appending(path: "README.md")
                if manager.fileExists(atPath: readme.path) { files.append(readme) }
            }
        }
        return files.filter { manager.fileExists(atPath: $0.path) }
    }

    /// The Swift blocks of a Markdown file, dedented, without leading imports.
    static func blocks(in url: URL) throws -> [Block] {
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var current: (line: Int, lines: [String])?
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = current {
                if trimmed == "```" {
                    let name = url.path.replacingOccurrences(of: root.path + "/", with: "")
                    blocks.append(Block(file: name, line: block.line, text: normalized(block.lines, dropImports: true)))
                    current = nil
                } else {
                    block.lines.append(line)
                    current = block
                }
            } else if trimmed == "```swift" {
                current = (index + 1, [])
            }
        }
        return blocks.filter { !$0.text.hasPrefix("// Package.swift") }
    }

    /// The regions between `// snippet begin` and `// snippet end` of the compiled files.
    static func snippets() throws -> [String] {
        let folder = root.appending(path: "Tests/StoreChainAppTests/Snippets")
        var regions: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
            var region: [String]?
            for line in try String(contentsOf: folder.appending(path: name), encoding: .utf8).components(
                separatedBy: "\n")
            {
                switch line.trimmingCharacters(in: .whitespaces) {
                case "// snippet begin": region = []
                case "// snippet end":
                    regions.append(normalized(region ?? [], dropImports: false))
                    region = nil
                default: region?.append(line)
                }
            }
        }
        return regions
    }

    static func normalized(_ lines: [String], dropImports: Bool) -> String {
        var lines = lines.map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix(while: { $0 == " " }).count }.min() ?? 0
        lines = lines.map { String($0.dropFirst(min(indent, $0.count))) }
        if dropImports { lines = Array(lines.drop(while: { $0.hasPrefix("import ") || $0.isEmpty })) }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    @Test func everyDocumentedSwiftBlockIsCompiled() throws {
        let blocks = try Self.documents().flatMap(Self.blocks)
        let snippets = Set(try Self.snippets())
        #expect(blocks.count >= 9, "the docs' Swift blocks were not found: \(blocks)")
        for block in blocks where !snippets.contains(block.text) {
            Issue.record(
                "\(block) is not compiled: copy it between '// snippet begin' and '// snippet end' in Tests/StoreChainAppTests/Snippets (or update the copy there)"
            )
        }
    }

    @Test func everyCompiledSnippetIsInTheDocs() throws {
        let blocks = Set(try Self.documents().flatMap(Self.blocks).map(\.text))
        for snippet in try Self.snippets() where !blocks.contains(snippet) {
            Issue.record("a snippet is in no document any more; remove it or put it back:\n\(snippet)")
        }
    }
}
