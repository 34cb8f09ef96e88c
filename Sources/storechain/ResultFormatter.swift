import StoreChain

/// Renders fetch results for the command line: JSON for programs, a table for people.
struct ResultFormatter {
    let entity: EntityDescription

    /// The columns shown for an object: attributes, then to-one relationships as keys.
    private var columns: [String] {
        entity.attributes.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
    }

    private func cell(_ node: Node, _ column: String) -> Value {
        if entity.attribute(named: column) != nil { return node[attribute: column] }
        guard case .toOne(let id?) = node.relationships[column] else { return .null }
        return id.key ?? .string(id.description)
    }

    /// A JSON array of objects with keys in model order; absent values are left out.
    func json(_ nodes: [Node]) -> String {
        var text = "["
        for (index, node) in nodes.enumerated() {
            text += index == 0 ? "\n  " : ",\n  "
            text += json(node)
        }
        return text + (nodes.isEmpty ? "]" : "\n]")
    }

    /// One object as a JSON object, keys in model order; absent values are left out.
    func json(_ node: Node) -> String {
        var text = "{"
        for column in columns {
            let value = cell(node, column)
            if value.isNull { continue }
            text += text == "{" ? "" : ", "
            JSONWriter.writeString(column, into: &text)
            text += ": "
            JSONWriter.write(value.jsonValue, into: &text)
        }
        return text + "}"
    }

    /// Dictionaries (chosen properties) as a JSON array, keys in the order asked for.
    static func json(_ rows: [[String: Value]], properties: [String]) -> String {
        var text = "["
        for (index, row) in rows.enumerated() {
            text += index == 0 ? "\n  {" : ",\n  {"
            for (position, property) in properties.enumerated() {
                text += position == 0 ? "" : ", "
                JSONWriter.writeString(property, into: &text)
                text += ": "
                JSONWriter.write((row[property] ?? .null).jsonValue, into: &text)
            }
            text += "}"
        }
        return text + (rows.isEmpty ? "]" : "\n]")
    }

    /// An aligned text table of objects.
    func table(_ nodes: [Node]) -> String {
        Self.table(header: columns, rows: nodes.map { node in columns.map { cell(node, $0) } })
    }

    /// An aligned text table; `nil` shows as an empty cell, long cells are shortened.
    static func table(header: [String], rows: [[Value]]) -> String {
        let cells = rows.map { row in
            row.map { value -> String in
                let text = value.isNull ? "" : value.description
                return text.count > 40 ? String(text.prefix(39)) + "…" : text
            }
        }
        var widths = header.map(\.count)
        for row in cells {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }
        var lines = [line(header), line(widths.map { String(repeating: "-", count: $0) })]
        lines += cells.map(line)
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
