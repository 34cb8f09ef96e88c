import Foundation
import StoreChain
import Yams

/// A YAML (or JSON) document read for configuration: each value with its line and column, and
/// helpers that report problems with file, line and key path.
package struct YAMLDocument {
    package let source: String?
    package let root: Yams.Node?

    /// The text of a configuration file; `what` names it in the error ("the model file").
    package static func text(at url: URL, what: String) throws(StoreChainError) -> String {
        do {
            return try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw StoreChainError(
                .unreadableFile, "cannot read \(what)", at: .init(file: url.relativePath),
                suggestion: "check the path and that the file is readable UTF-8 text", underlying: error)
        }
    }

    /// Parses `text`; JSON is read by the same parser, so it gets line numbers too.
    package init(text: String, source: String?) throws(StoreChainError) {
        self.source = source
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw Self.syntaxError(error, source: source)
        } catch {
            throw StoreChainError(
                .unreadableFile, "cannot parse the file", at: .init(file: source), underlying: error)
        }
    }

    private static func syntaxError(_ error: YamlError, source: String?) -> StoreChainError {
        let location: StoreChainError.Location
        let problem: String
        switch error {
        case .scanner(_, let text, let mark, _), .parser(_, let text, let mark, _), .composer(_, let text, let mark, _):
            location = .init(file: source, line: mark.line, column: mark.column)
            problem = text
        case .duplicatedKeysInMapping(let duplicates, let context):
            return StoreChainError(
                .invalidModel, duplicates.map { "'\($0)'" }.joined(separator: ", ") + " appears twice in one mapping",
                at: .init(file: source, line: context.mark.line, column: context.mark.column),
                suggestion: "remove or rename one of them")
        case .reader(let text, let offset, _, _):
            location = .init(file: source, offset: offset)
            problem = text
        default:
            location = .init(file: source)
            problem = "\(error)"
        }
        return StoreChainError(
            .unreadableFile, "the file is not valid YAML or JSON: \(problem)", at: location,
            suggestion: "fix the syntax at that line (check indentation, colons and quotes)")
    }

    package func location(_ node: Yams.Node?, _ path: String) -> StoreChainError.Location {
        .init(file: source, line: node?.mark?.line, column: node?.mark?.column, path: path)
    }

    package func problem(_ node: Yams.Node?, _ path: String, _ message: String, _ suggestion: String? = nil)
        -> StoreChainError
    {
        StoreChainError(.invalidModel, message, at: location(node, path), suggestion: suggestion)
    }

    /// The pairs of a mapping, checking for non-string keys. (Yams already rejects duplicates.)
    package func pairs(_ node: Yams.Node, _ path: String, problems: inout [StoreChainError]) -> [(
        key: String, keyNode: Yams.Node, value: Yams.Node
    )]? {
        guard case .mapping(let mapping) = node else {
            problems.append(problem(node, path, "expected a mapping of names to values, found \(describe(node))"))
            return nil
        }
        var result: [(String, Yams.Node, Yams.Node)] = []
        for (keyNode, value) in mapping {
            guard case .scalar(let scalar) = keyNode else {
                problems.append(problem(keyNode, path, "keys must be plain names, found \(describe(keyNode))"))
                continue
            }
            result.append((scalar.string, keyNode, value))
        }
        return result
    }

    /// The key (or list item) a key path such as `entities.Band.fetch[0].request` names under
    /// `node`, or the deepest one found on the way; `nil` when not even its first key is there.
    package func node(at path: String, under node: Yams.Node) -> Yams.Node? {
        var steps: [(key: String?, index: Int?)] = []
        for component in path.split(separator: ".") {
            var name = component
            var indices: [Int] = []
            while name.hasSuffix("]"), let open = name.lastIndex(of: "["),
                let index = Int(name[name.index(after: open)..<name.index(before: name.endIndex)])
            {
                indices.insert(index, at: 0)
                name = name[..<open]
            }
            steps.append((String(name), nil))
            steps += indices.map { (nil, $0) }
        }
        var current = node
        var found: Yams.Node?
        for step in steps {
            if let key = step.key {
                guard case .mapping(let mapping) = current,
                    let pair = mapping.first(where: { $0.key.scalar?.string == key })
                else { break }
                (current, found) = (pair.value, pair.key)
            } else if let index = step.index {
                guard case .sequence(let items) = current, items.indices.contains(index) else { break }
                (current, found) = (items[index], items[index])
            }
        }
        return found
    }

    /// The string of a scalar, or a problem.
    package func string(_ node: Yams.Node, _ path: String, problems: inout [StoreChainError]) -> String? {
        guard case .scalar(let scalar) = node else {
            problems.append(problem(node, path, "expected a name, found \(describe(node))"))
            return nil
        }
        return scalar.string
    }

    /// A scalar as JSON, by its resolved YAML tag (`3` integer, `1.5` double, `true`, `null`).
    package func json(_ node: Yams.Node) -> JSONValue? {
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain {
                if let integer = Int.construct(from: scalar) { return .integer(integer) }
                if let double = Double.construct(from: scalar) { return .double(double) }
                if let flag = Bool.construct(from: scalar) { return .bool(flag) }
                if scalar.string == "~" || scalar.string == "null" || scalar.string.isEmpty { return .null }
            }
            return .string(scalar.string)
        case .sequence(let sequence):
            var elements: [JSONValue] = []
            for element in sequence {
                guard let value = json(element) else { return nil }
                elements.append(value)
            }
            return .array(elements)
        case .mapping(let mapping):
            var members: [String: JSONValue] = [:]
            for (key, value) in mapping {
                guard case .scalar(let name) = key, let member = json(value) else { return nil }
                members[name.string] = member
            }
            return .object(members)
        case .alias:
            return nil
        }
    }

    package func describe(_ node: Yams.Node) -> String {
        switch node {
        case .scalar(let scalar): "'\(scalar.string)'"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    package func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }
}
