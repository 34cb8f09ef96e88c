import Foundation
import StoreChain
import Yams

/// Decodes `Decodable` options from one node of a YAML or JSON document. Keys match whatever
/// their spelling (`max-objects` is `maxObjects`), strings take `${ENV}` values, and every error
/// says file, line, column and key path.
final class NodeDecoder: Decoder {
    let node: Yams.Node?
    let path: String
    let session: DecodingSession
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any] = [:]

    init(node: Yams.Node?, path: String, session: DecodingSession, codingPath: [any CodingKey] = []) {
        self.node = node
        self.path = path
        self.session = session
        self.codingPath = codingPath
    }

    var location: StoreChainError.Location { session.document.location(node, path) }

    func problem(_ message: String, _ suggestion: String? = nil) -> StoreChainError {
        StoreChainError(.invalidPipeline, message, at: location, suggestion: suggestion)
    }

    /// Decodes a value here; errors that do not say where they are get this node's place.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == URL.self {
            let text = try scalarText("a URL")
            guard let url = URL(string: text), url.scheme != nil, let typed = url as? T else {
                throw problem("'\(text)' is not an absolute URL", "write it as http://host:port/path")
            }
            return typed
        }
        do {
            return try T(from: self)
        } catch let error as StoreChainError {
            throw error.location?.line == nil ? error.located(location) : error
        } catch let error as DecodingError {
            throw problem(Self.describe(error))
        }
    }

    func child(_ node: Yams.Node?, key: any CodingKey, path: String) -> NodeDecoder {
        NodeDecoder(node: node, path: path, session: session, codingPath: codingPath + [key])
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let node, case .mapping(let mapping) = node else {
            throw problem("expected a mapping of options, found \(describe(node))", "write it as { name: value, … }")
        }
        var pairs: [(String, Yams.Node)] = []
        for (keyNode, value) in mapping {
            guard case .scalar(let scalar) = keyNode else {
                throw problem("keys must be plain names, found \(describe(keyNode))")
            }
            pairs.append((scalar.string, value))
        }
        session.registerMapping(path, node: node, keys: mapping.map { key, _ in (key.scalar?.string ?? "", key) })
        return KeyedDecodingContainer(NodeKeyedContainer<Key>(decoder: self, pairs: pairs))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let node, case .sequence(let sequence) = node else {
            throw problem("expected a list, found \(describe(node))", "write it as [a, b] or one '- item' per line")
        }
        return NodeUnkeyedContainer(decoder: self, elements: Array(sequence))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        NodeSingleValueContainer(decoder: self)
    }

    func describe(_ node: Yams.Node?) -> String {
        node.map(session.document.describe) ?? "nothing"
    }

    /// The scalar text here, with `${ENV}` replaced.
    func scalarText(_ expected: String) throws -> String {
        guard let node, case .scalar(let scalar) = node else {
            throw problem("expected \(expected), found \(describe(node))")
        }
        return try session.substitute(scalar.string, at: location)
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            context.debugDescription
        @unknown default: "\(error)"
        }
    }
}

struct NodeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let pairs: [(String, Yams.Node)]

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        decoder.session.takeAll(decoder.path)
        return pairs.compactMap { Key(stringValue: $0.0) }
    }

    private func find(_ key: Key) -> (String, Yams.Node)? {
        decoder.session.ask(key.stringValue, in: decoder.path)
        if let exact = pairs.first(where: { $0.0 == key.stringValue }) { return exact }
        let wanted = DecodingSession.normalize(key.stringValue)
        return pairs.first { DecodingSession.normalize($0.0) == wanted }
    }

    private func childPath(_ name: String) -> String {
        decoder.path.isEmpty ? name : "\(decoder.path).\(name)"
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let (_, node) = find(key) else { return true }
        if case .scalar(let scalar) = node, scalar.style == .plain, ["null", "~", ""].contains(scalar.string) {
            return true
        }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let (name, node) = find(key) else {
            let option = DecodingSession.fileName(key.stringValue)
            // A key written here that is close to the missing one is most likely it, misspelt.
            if let misspelt = Suggestion.closest(to: option, in: pairs.map(\.0)) {
                throw decoder.problem(
                    "the required option '\(option)' is missing; '\(misspelt)' is here instead",
                    "did you mean '\(option)'? write '\(option): …' in place of '\(misspelt)'")
            }
            throw decoder.problem("the required option '\(option)' is missing", "add '\(option): …'")
        }
        return try decoder.child(node, key: key, path: childPath(name)).decode(T.self)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(Wrapped<Bool>.self, forKey: key).value }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decode(Wrapped<String>.self, forKey: key).value
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decode(Wrapped<Double>.self, forKey: key).value
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        Float(try decode(Wrapped<Double>.self, forKey: key).value)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(Wrapped<Int>.self, forKey: key).value }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        guard let (name, node) = find(key) else { throw decoder.problem("'\(key.stringValue)' is missing") }
        return try decoder.child(node, key: key, path: childPath(name)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        guard let (name, node) = find(key) else { throw decoder.problem("'\(key.stringValue)' is missing") }
        return try decoder.child(node, key: key, path: childPath(name)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        let found = find(key)
        return decoder.child(found?.1, key: key, path: childPath(found?.0 ?? key.stringValue))
    }
}

/// Reads a primitive through the single-value container, so keyed primitives share its rules.
private struct Wrapped<Value: Decodable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Value.self)
    }
}

struct NodeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let elements: [Yams.Node]
    var currentIndex = 0

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> NodeDecoder {
        guard !isAtEnd else { throw decoder.problem("the list has too few items") }
        defer { currentIndex += 1 }
        return decoder.child(
            elements[currentIndex], key: IndexKey(currentIndex), path: "\(decoder.path)[\(currentIndex)]")
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .scalar(let scalar) = elements[currentIndex], scalar.string == "null" else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

struct IndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ index: Int) {
        stringValue = "[\(index)]"
        intValue = index
    }

    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.init(intValue) }
}

struct NodeSingleValueContainer: SingleValueDecodingContainer {
    let decoder: NodeDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        guard let node = decoder.node else { return true }
        if case .scalar(let scalar) = node, scalar.style == .plain, ["null", "~", ""].contains(scalar.string) {
            return true
        }
        return false
    }

    func decode(_ type: String.Type) throws -> String { try decoder.scalarText("text") }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch try decoder.scalarText("true or false").lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        case let other: throw decoder.problem("expected true or false, found '\(other)'")
        }
    }

    func decode(_ type: Int.Type) throws -> Int {
        let text = try decoder.scalarText("a whole number").replacingOccurrences(of: "_", with: "")
        guard let value = Int(text) else { throw decoder.problem("expected a whole number, found '\(text)'") }
        return value
    }

    func decode(_ type: Double.Type) throws -> Double {
        let text = try decoder.scalarText("a number")
        guard let value = Double(text) else { throw decoder.problem("expected a number, found '\(text)'") }
        return value
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int8.Type) throws -> Int8 { try narrow(try decode(Int.self)) }
    func decode(_ type: Int16.Type) throws -> Int16 { try narrow(try decode(Int.self)) }
    func decode(_ type: Int32.Type) throws -> Int32 { try narrow(try decode(Int.self)) }
    func decode(_ type: Int64.Type) throws -> Int64 { Int64(try decode(Int.self)) }
    func decode(_ type: UInt.Type) throws -> UInt { try narrow(try decode(Int.self)) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try narrow(try decode(Int.self)) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try narrow(try decode(Int.self)) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try narrow(try decode(Int.self)) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try narrow(try decode(Int.self)) }

    private func narrow<T: FixedWidthInteger>(_ value: Int) throws -> T {
        guard let narrowed = T(exactly: value) else {
            throw decoder.problem("\(value) is out of range (\(T.min)…\(T.max))")
        }
        return narrowed
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(T.self) }
}
