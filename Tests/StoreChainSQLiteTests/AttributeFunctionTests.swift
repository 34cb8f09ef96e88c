import Foundation
import GRDB
import StoreChain
import Testing

@testable import StoreChainSQLite

/// `storechain_attribute`, the SQL function a compiled predicate calls on every row it scans:
/// each value as SQLite compares it, from plain and compressed payloads, and a failed statement
/// (never a value, never NULL) for a row it cannot read.
@Suite struct AttributeFunctionTests {
    /// A connection with the function and one row of the disk cache's payload columns.
    static func database(
        payload: (any DatabaseValueConvertible)?, compressed: (any DatabaseValueConvertible)?,
        rawSize: (any DatabaseValueConvertible)?
    ) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try AttributeFunction.install(in: db) }
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE nodes (payload BLOB, compressed INTEGER, raw_size INTEGER)")
            try db.execute(sql: "INSERT INTO nodes VALUES (?, ?, ?)", arguments: [payload, compressed, rawSize])
        }
        return queue
    }

    static func attribute(_ name: String?, in queue: DatabaseQueue) throws -> DatabaseValue {
        try queue.read { db in
            try DatabaseValue.fetchOne(
                db, sql: "SELECT \(AttributeFunction.name)(payload, compressed, raw_size, ?) FROM nodes",
                arguments: [name]) ?? .null
        }
    }

    /// `NodePayloadTests.everyValue`, long enough to be stored compressed.
    static let node: Node = {
        var node = NodePayloadTests.everyValue
        node.attributes["lyrics"] = .string(String(repeating: "la ", count: 200))
        return node
    }()

    @Test func everyValueReadsAsSQLiteComparesItFromPlainAndCompressedPayloads() throws {
        let payload = try NodePayload.encode(Self.node)
        let compressed = try #require(Zlib.compressIfSmaller(payload), "the payload compresses")
        let when = Date(timeIntervalSinceReferenceDate: 123.456_789).timeIntervalSince1970
        let expected: [String: DatabaseValue] = [
            "text": "Sigur Rós \u{1F3B8}".databaseValue, "empty": "".databaseValue, "small": (-3).databaseValue,
            "large": Int.max.databaseValue, "smallest": Int.min.databaseValue, "ratio": (-0.1).databaseValue,
            "yes": 1.databaseValue, "no": 0.databaseValue, "when": when.databaseValue,
            "lyrics": String(repeating: "la ", count: 200).databaseValue,
            // Kinds no predicate is compiled for, and attributes the node lacks, read as NULL.
            "price": .null, "bytes": .null, "uuid": .null, "link": .null, "extra": .null, "none": .null,
            "missing": .null,
        ]
        let plain = try Self.database(payload: payload, compressed: false, rawSize: payload.count)
        let deflated = try Self.database(payload: compressed, compressed: true, rawSize: payload.count)
        for (name, value) in expected {
            #expect(try Self.attribute(name, in: plain) == value, "\(name)")
            #expect(try Self.attribute(name, in: deflated) == value, "\(name), compressed")
        }
    }

    @Test func aRowItCannotReadFailsTheStatementInsteadOfReadingAsNull() throws {
        let payload = try NodePayload.encode(Self.node)
        var flipped = payload
        flipped[flipped.count - 1] ^= 0x04
        let rows:
            [(
                String, (any DatabaseValueConvertible)?, (any DatabaseValueConvertible)?,
                (any DatabaseValueConvertible)?
            )] = [
                ("a damaged payload", flipped, false, payload.count),
                ("no payload", nil, false, payload.count),
                ("a number for a payload", 42, false, payload.count),
                ("text for the flag", payload, "yes", payload.count),
                ("no flag", payload, nil, payload.count),
                ("text for the size", payload, false, "big"),
                ("a plain payload marked compressed", payload, true, payload.count),
            ]
        for (label, payload, compressed, rawSize) in rows {
            let queue = try Self.database(payload: payload, compressed: compressed, rawSize: rawSize)
            let error = #expect(throws: DatabaseError.self, "\(label)") { try Self.attribute("text", in: queue) }
            #expect(error?.message == SQLPredicate.damagedPayload, "\(label)")
        }
        let intact = try Self.database(payload: payload, compressed: false, rawSize: payload.count)
        #expect(throws: DatabaseError.self, "no name") { try Self.attribute(nil, in: intact) }
        #expect(try Self.attribute("text", in: intact) == "Sigur Rós \u{1F3B8}".databaseValue)
    }
}
