import Foundation
import StoreChain

/// Reading one attribute or one to-one target out of a stored payload without decoding the
/// node: what the disk cache's SQL functions (`AttributeFunction`) call for every row they scan.
extension NodePayload {
    /// The value of attribute `name` in a payload (`.null` when the node has none), without
    /// decoding the rest of the node.
    static func attribute(_ name: String, in payload: Data) throws(StoreChainSQLiteError) -> Value {
        var name = name
        let result: Result<Value, StoreChainSQLiteError> = name.withUTF8 { name in
            payload.withUnsafeBytes { payload in
                Result { () throws(StoreChainSQLiteError) in
                    try attribute(named: UnsafeRawBufferPointer(name), in: payload)
                }
            }
        }
        return try result.get()
    }

    /// The value of the attribute whose name has the UTF-8 bytes `name` in the payload's bytes
    /// (`.null` when the node has none), without decoding the rest of the node.
    static func attribute(named name: UnsafeRawBufferPointer, in payload: UnsafeRawBufferPointer)
        throws(StoreChainSQLiteError) -> Value
    {
        try withVerifiedReader(payload) { reader throws(StoreChainSQLiteError) in
            try reader.skipHeader()
            for _ in 0..<(try reader.count()) {
                if try reader.stringEquals(name) { return try reader.value() }
                try reader.skipValue()
            }
            return .null
        }
    }

    /// The key of the object a to-one relationship whose name has the UTF-8 bytes `name` leads
    /// to (`.null` when it leads nowhere, is to-many or the node has none), without decoding
    /// the rest of the node.
    static func target(named name: UnsafeRawBufferPointer, in payload: UnsafeRawBufferPointer)
        throws(StoreChainSQLiteError) -> Value
    {
        try withVerifiedReader(payload) { reader throws(StoreChainSQLiteError) in
            try reader.skipHeader()
            for _ in 0..<(try reader.count()) {
                try reader.skipLengthPrefixed()
                try reader.skipValue()
            }
            for _ in 0..<(try reader.count()) {
                let wanted = try reader.stringEquals(name)
                guard let kind = RelationshipKind(rawValue: try reader.byte()) else {
                    throw reader.damage("an unknown relationship kind")
                }
                switch kind {
                case .noTarget:
                    if wanted { return .null }
                case .toOne:
                    try reader.skipLengthPrefixed()  // the target's entity
                    if wanted { return try reader.value() }
                    try reader.skipValue()
                case .toMany:
                    for _ in 0..<(try reader.count()) {
                        try reader.skipLengthPrefixed()
                        try reader.skipValue()
                    }
                    if wanted { return .null }
                }
            }
            return .null
        }
    }
}
