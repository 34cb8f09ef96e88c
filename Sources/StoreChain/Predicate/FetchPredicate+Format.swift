import Foundation

extension FetchPredicate: CustomStringConvertible {
    /// The canonical text of this predicate. Parsing it gives back an equal predicate, so it
    /// serves as a cache key: `==` not `=`, `AND` not `&&`, `ANY` not `SOME`, strings in double
    /// quotes, dates as `CAST(seconds since 2001, "NSDate")`.
    public var format: String { format(redactingValues: false) }

    /// The canonical text, with every constant replaced by `?` when `redactingValues` (for logs
    /// and traces that must not hold what users typed): `name BEGINSWITH[c] ? AND year >= ?`.
    public func format(redactingValues: Bool) -> String {
        var text = ""
        PredicatePrinter(redactsValues: redactingValues).write(self, into: &text)
        return text
    }

    public var description: String { format }
}

extension Operand: CustomStringConvertible {
    /// The canonical text of this expression.
    public var description: String {
        var text = ""
        PredicatePrinter().write(self, into: &text)
        return text
    }
}

extension Comparison: CustomStringConvertible {
    public var description: String { FetchPredicate.comparison(self).format }
}

struct PredicatePrinter {
    var redactsValues = false

    func write(_ predicate: FetchPredicate, into text: inout String) {
        switch predicate {
        case .true: text += "TRUEPREDICATE"
        case .false: text += "FALSEPREDICATE"
        case .and(let operands): writeCompound(operands, separator: " AND ", into: &text)
        case .or(let operands): writeCompound(operands, separator: " OR ", into: &text)
        case .not(let operand):
            text += "NOT ("
            write(operand, into: &text)
            text += ")"
        case .comparison(let comparison): write(comparison, into: &text)
        }
    }

    private func writeCompound(_ operands: [FetchPredicate], separator: String, into text: inout String) {
        if operands.isEmpty {
            text += separator == " AND " ? "TRUEPREDICATE" : "FALSEPREDICATE"
            return
        }
        for (index, operand) in operands.enumerated() {
            if index > 0 { text += separator }
            let needsParentheses: Bool =
                switch operand {
                case .and, .or: true
                default: false
                }
            if needsParentheses { text += "(" }
            write(operand, into: &text)
            if needsParentheses { text += ")" }
        }
    }

    func write(_ comparison: Comparison, into text: inout String) {
        if comparison.modifier != .direct { text += comparison.modifier.rawValue + " " }
        write(comparison.lhs, into: &text)
        text += " " + comparison.op.rawValue
        if !comparison.options.isEmpty {
            text += "["
            if comparison.options.contains(.caseInsensitive) { text += "c" }
            if comparison.options.contains(.diacriticInsensitive) { text += "d" }
            text += "]"
        }
        text += " "
        write(comparison.rhs, into: &text)
    }

    func write(_ expression: Operand, into text: inout String) {
        switch expression {
        case .keyPath(let components): writeKeyPath(components, into: &text)
        case .constant(let value): write(value, into: &text)
        case .array(let elements):
            text += "{"
            for (index, element) in elements.enumerated() {
                if index > 0 { text += ", " }
                write(element, into: &text)
            }
            text += "}"
        case .variable(let name): text += "$" + name
        case .aggregate(let function, let collection, let property):
            writeKeyPath(collection, into: &text)
            text += ".@" + function.rawValue
            if !property.isEmpty {
                text += "."
                writeKeyPath(property, into: &text)
            }
        }
    }

    private func writeKeyPath(_ components: [String], into text: inout String) {
        for (index, component) in components.enumerated() {
            if index > 0 { text += "." }
            if PredicateLexer.isReserved(component) { text += "#" }
            text += component
        }
    }

    func write(_ value: Value, into text: inout String) {
        if redactsValues {
            text += "?"
            return
        }
        switch value {
        case .null: text += "nil"
        case .string(let string): writeString(string, into: &text)
        case .integer(let number): text += String(number)
        case .double(let number):
            if number.isFinite {
                text += number.description
            } else {
                text += "CAST(\"\(number)\", \"Double\")"
            }
        case .bool(let flag): text += flag ? "TRUE" : "FALSE"
        case .date(let date): text += "CAST(\(date.timeIntervalSinceReferenceDate.description), \"NSDate\")"
        case .decimal(let decimal): writeCast(decimal.description, "NSDecimalNumber", into: &text)
        case .uuid(let uuid): writeCast(uuid.uuidString, "NSUUID", into: &text)
        case .url(let url): writeCast(url.absoluteString, "NSURL", into: &text)
        case .data(let data): writeCast(data.base64EncodedString(), "NSData", into: &text)
        case .json(let json): writeCast(json.description, "JSON", into: &text)
        }
    }

    private func writeCast(_ string: String, _ type: String, into text: inout String) {
        text += "CAST("
        writeString(string, into: &text)
        text += ", \"\(type)\")"
    }

    func writeString(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
