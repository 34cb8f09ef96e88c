import CZlib
import Foundation
@_spi(Internals) import StoreChain

/// How the disk cache writes a node: a compact binary payload, read back without a JSON decoder.
///
/// Layout (little-endian; lengths and counts are LEB128 varints):
/// `version (1 byte)` `CRC-32 of the rest (4 bytes)` `entity` `key value` `has version (1 byte)`
/// `[version string]` `attribute count` `(name, value)…` `relationship count`
/// `(name, kind, targets)…`. A value is a tag byte and its bytes (`Tag`). The checksum makes a
/// damaged payload an error (the entry is dropped and fetched again), never a different value.
package enum NodePayload {
    /// The layout this code writes; a payload of another version is damaged to this code.
    static let version: UInt8 = 1

    private enum Tag: UInt8 {
        case null, string, integer, double, decimal, falseBool, trueBool, date, data, uuid, url, json
    }

    enum RelationshipKind: UInt8 {
        case noTarget, toOne, toMany
    }

    // MARK: Writing

    package static func encode(_ node: Node) throws(StoreChainSQLiteError) -> Data {
        var writer = Writer()
        // Room for a typical node at once, rather than grown a few times on the way.
        writer.bytes.reserveCapacity(64 + 32 * (node.attributes.count + node.relationships.count))
        writer.bytes += [version, 0, 0, 0, 0]
        writer.reference(try StoredNode.Reference(node.id))
        if let version = node.version {
            writer.bytes.append(1)
            writer.string(version)
        } else {
            writer.bytes.append(0)
        }
        writer.varint(UInt64(node.attributes.count))
        for (name, value) in node.attributes {
            writer.string(name)
            writer.value(value)
        }
        writer.varint(UInt64(node.relationships.count))
        for (name, relationship) in node.relationships {
            writer.string(name)
            switch relationship {
            case .toOne(nil):
                writer.bytes.append(RelationshipKind.noTarget.rawValue)
            case .toOne(let target?):
                writer.bytes.append(RelationshipKind.toOne.rawValue)
                writer.reference(try StoredNode.Reference(target))
            case .toMany(let targets):
                writer.bytes.append(RelationshipKind.toMany.rawValue)
                writer.varint(UInt64(targets.count))
                for target in targets { writer.reference(try StoredNode.Reference(target)) }
            }
        }
        seal(&writer.bytes)
        return Data(writer.bytes)
    }

    /// Writes the checksum of a payload's body (every byte after the header) into its header.
    static func seal(_ bytes: inout [UInt8]) {
        let checksum = bytes.withUnsafeBufferPointer { Self.checksum(UnsafeRawBufferPointer($0).dropFirst(5)) }
        for index in 0..<4 { bytes[1 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * index)) }
    }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            var rest = value
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        mutating func fixed(_ value: UInt64) {
            for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }

        mutating func lengthPrefixed(_ content: some Collection<UInt8>) {
            varint(UInt64(content.count))
            bytes.append(contentsOf: content)
        }

        mutating func string(_ text: String) {
            lengthPrefixed(text.utf8)
        }

        mutating func reference(_ reference: StoredNode.Reference) {
            string(reference.entity)
            value(reference.key)
        }

        mutating func value(_ value: Value) {
            switch value {
            case .null: bytes.append(Tag.null.rawValue)
            case .string(let text):
                bytes.append(Tag.string.rawValue)
                string(text)
            case .integer(let number):
                bytes.append(Tag.integer.rawValue)
                // Zigzag, so small negative numbers stay short.
                varint(UInt64(bitPattern: Int64((number << 1) ^ (number >> (Int.bitWidth - 1)))))
            case .double(let number):
                bytes.append(Tag.double.rawValue)
                fixed(number.bitPattern)
            case .decimal(let number):
                bytes.append(Tag.decimal.rawValue)
                string(number.description)
            case .bool(let flag): bytes.append(flag ? Tag.trueBool.rawValue : Tag.falseBool.rawValue)
            case .date(let date):
                bytes.append(Tag.date.rawValue)
                fixed(date.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let data):
                bytes.append(Tag.data.rawValue)
                lengthPrefixed(data)
            case .uuid(let uuid):
                bytes.append(Tag.uuid.rawValue)
                withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
            case .url(let url):
                bytes.append(Tag.url.rawValue)
                string(url.absoluteString)
            case .json(let json):
                bytes.append(Tag.json.rawValue)
                string(json.description)
            }
        }
    }

    // MARK: Reading

    /// The node a payload holds, with `freshness`.
    static func decode(_ payload: Data, freshness: Freshness) throws(StoreChainSQLiteError) -> Node {
        var names: [String] = []
        return try decode(payload, freshness: freshness, sharingNames: &names)
    }

    /// The node a payload holds, with `freshness`. `sharedNames` holds the attribute names of the
    /// node decoded before: a node with the same names shares that array (the nodes of one
    /// entity repeat their names, and then each pays for its values only).
    package static func decode(_ payload: Data, freshness: Freshness, sharingNames sharedNames: inout [String])
        throws(StoreChainSQLiteError) -> Node
    {
        try withVerifiedReader(payload) { reader throws(StoreChainSQLiteError) in
            let id = try reader.reference()
            let version = try reader.byte() == 0 ? nil : try reader.string()
            let attributeCount = try reader.count()
            var names: [String] = []
            var values: [Value] = []
            names.reserveCapacity(attributeCount)
            values.reserveCapacity(attributeCount)
            for _ in 0..<attributeCount {
                names.append(try reader.string())
                values.append(try reader.value())
            }
            if names == sharedNames { names = sharedNames } else { sharedNames = names }
            // Payloads written before names were kept in order are sorted here.
            let attributes = AttributeValues(names: names, values: values)
            var relationships: [String: RelationshipValue] = [:]
            for _ in 0..<(try reader.count()) {
                let name = try reader.string()
                switch RelationshipKind(rawValue: try reader.byte()) {
                case .noTarget: relationships[name] = .toOne(nil)
                case .toOne: relationships[name] = .toOne(try reader.reference())
                case .toMany:
                    var targets: [ObjectID] = []
                    let count = try reader.count()
                    targets.reserveCapacity(count)
                    for _ in 0..<count { targets.append(try reader.reference()) }
                    relationships[name] = .toMany(targets)
                case nil: throw reader.damage("an unknown relationship kind")
                }
            }
            guard reader.isAtEnd else { throw reader.damage("bytes after the node") }
            return Node(
                id: id, attributes: attributes, relationships: relationships, version: version, freshness: freshness)
        }
    }

    static func withVerifiedReader<T>(
        _ payload: Data, _ body: (inout Reader) throws(StoreChainSQLiteError) -> T
    ) throws(StoreChainSQLiteError) -> T {
        let result: Result<T, StoreChainSQLiteError> = payload.withUnsafeBytes { buffer in
            Result { () throws(StoreChainSQLiteError) in try withVerifiedReader(buffer, body) }
        }
        return try result.get()
    }

    static func withVerifiedReader<T>(
        _ buffer: UnsafeRawBufferPointer, _ body: (inout Reader) throws(StoreChainSQLiteError) -> T
    ) throws(StoreChainSQLiteError) -> T {
        guard buffer.count >= 5, buffer[0] == version else {
            throw StoreChainSQLiteError("a node payload has an unknown layout")
        }
        var stored: UInt32 = 0
        for index in 0..<4 { stored |= UInt32(buffer[1 + index]) << (8 * index) }
        guard stored == checksum(buffer[5...]) else { throw StoreChainSQLiteError("a node payload fails its checksum") }
        var reader = Reader(buffer: buffer, offset: 5)
        return try body(&reader)
    }

    private static func checksum(_ bytes: Slice<UnsafeRawBufferPointer>) -> UInt32 {
        let buffer = UnsafeRawBufferPointer(rebasing: bytes)
        guard let base = buffer.baseAddress else { return UInt32(crc32(0, nil, 0)) }
        return UInt32(crc32(0, base.assumingMemoryBound(to: Bytef.self), uInt(buffer.count)))
    }

    /// Reads a payload's bytes; every read is bounds-checked, so damage is an error, not a crash.
    struct Reader {
        let buffer: UnsafeRawBufferPointer
        var offset: Int

        var isAtEnd: Bool { offset == buffer.count }

        func damage(_ what: String) -> StoreChainSQLiteError {
            StoreChainSQLiteError("a node payload is damaged at byte \(offset): \(what)")
        }

        mutating func byte() throws(StoreChainSQLiteError) -> UInt8 {
            guard offset < buffer.count else { throw damage("it ends early") }
            defer { offset += 1 }
            return buffer[offset]
        }

        mutating func varint() throws(StoreChainSQLiteError) -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                let byte = try byte()
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
            }
            throw damage("a number longer than 64 bits")
        }

        /// A length or count, which cannot exceed the bytes left.
        mutating func count() throws(StoreChainSQLiteError) -> Int {
            let value = try varint()
            guard value <= UInt64(buffer.count - offset) else { throw damage("a length past its end") }
            return Int(value)
        }

        mutating func fixed() throws(StoreChainSQLiteError) -> UInt64 {
            guard buffer.count - offset >= 8 else { throw damage("it ends early") }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(buffer[offset + index]) << (8 * index) }
            offset += 8
            return value
        }

        mutating func bytes(_ count: Int) throws(StoreChainSQLiteError) -> UnsafeRawBufferPointer {
            guard buffer.count - offset >= count else { throw damage("it ends early") }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
        }

        mutating func string() throws(StoreChainSQLiteError) -> String {
            let utf8 = try bytes(try count()).bindMemory(to: UInt8.self)
            // Decoding repairs invalid UTF-8 into valid text, so the text has the same bytes as
            // the payload exactly when the payload was valid. (Unlike `String(validating:as:)`,
            // which is generic and looks up type metadata on every call, this is the fast path.)
            var text = String(decoding: utf8, as: UTF8.self)
            let isIntact = text.withUTF8 { decoded in
                guard decoded.count == utf8.count else { return false }
                guard let left = decoded.baseAddress, let right = utf8.baseAddress else { return true }  // both empty
                return memcmp(left, right, utf8.count) == 0
            }
            guard isIntact else { throw damage("text that is not UTF-8") }
            return text
        }

        /// Skips the entity, the key and the version, to the attributes.
        mutating func skipHeader() throws(StoreChainSQLiteError) {
            try skipLengthPrefixed()  // the entity
            try skipValue()  // the key
            if try byte() != 0 { try skipLengthPrefixed() }  // the version
        }

        mutating func skipLengthPrefixed() throws(StoreChainSQLiteError) {
            _ = try bytes(try count())
        }

        mutating func stringEquals(_ wanted: UnsafeRawBufferPointer) throws(StoreChainSQLiteError) -> Bool {
            let utf8 = try bytes(try count())
            return utf8.count == wanted.count && utf8.elementsEqual(wanted)
        }

        mutating func reference() throws(StoreChainSQLiteError) -> ObjectID {
            let entity = try string()
            return ObjectID(entity: entity, key: try value())
        }

        mutating func value() throws(StoreChainSQLiteError) -> Value {
            guard let tag = Tag(rawValue: try byte()) else { throw damage("an unknown value type") }
            switch tag {
            case .null: return .null
            case .string: return .string(try string())
            case .integer:
                let zigzag = try varint()
                return .integer(Int(truncatingIfNeeded: Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))))
            case .double: return .double(Double(bitPattern: try fixed()))
            case .decimal:
                let text = try string()
                guard let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw damage("'\(text)' is not a decimal")
                }
                return .decimal(number)
            case .falseBool: return .bool(false)
            case .trueBool: return .bool(true)
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed())))
            case .data: return .data(Data(try bytes(try count())))
            case .uuid:
                let raw = try bytes(16)
                var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
                return .uuid(UUID(uuid: uuid))
            case .url:
                let text = try string()
                guard let url = URL(string: text) else { throw damage("'\(text)' is not a URL") }
                return .url(url)
            case .json:
                let text = try string()
                do throws(StoreChainError) {
                    return .json(try JSONParser().parse(text))
                } catch {
                    throw damage("JSON that does not parse (\(error.description))")
                }
            }
        }

        mutating func skipValue() throws(StoreChainSQLiteError) {
            guard let tag = Tag(rawValue: try byte()) else { throw damage("an unknown value type") }
            switch tag {
            case .null, .falseBool, .trueBool: break
            case .string, .decimal, .url, .json, .data: try skipLengthPrefixed()
            case .integer: _ = try varint()
            case .double, .date: _ = try bytes(8)
            case .uuid: _ = try bytes(16)
            }
        }
    }
}
