import Foundation
import GRDB
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// The disk cache's binary node layout: every value type round-trips, damage is always an
/// error (never a different value), and a damaged node never silently leaves a cached answer.
@Suite struct NodePayloadTests {
    static let everyValue: Node = {
        let attributes: AttributeValues = [
            "text": .string("Sigur Rós \u{1F3B8}"), "empty": .string(""), "small": .integer(-3),
            "large": .integer(Int.max), "smallest": .integer(Int.min), "ratio": .double(-0.1),
            "price": .decimal(Decimal(string: "12.345", locale: Locale(identifier: "en_US_POSIX")) ?? 0),
            "yes": .bool(true), "no": .bool(false), "when": .date(Date(timeIntervalSinceReferenceDate: 123.456_789)),
            "bytes": .data(Data([0, 1, 2, 255])),
            "uuid": .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
            "link": .url(URL(string: "https://music.example/bands/1?x=1#top") ?? URL(filePath: "/")),
            "extra": .json(.object(["a": .array([.integer(1), .null, .string("b")])])), "none": .null,
        ]
        return Node(
            id: ObjectID(entity: "Band", key: "sigur-ros"), attributes: attributes,
            relationships: [
                "albums": .toMany([ObjectID(entity: "Album", key: 1), ObjectID(entity: "Album", key: 2)]),
                "label": .toOne(
                    ObjectID(entity: "Label", key: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))))),
                "manager": .toOne(nil), "members": .toMany([]),
            ], version: "\"v7\"")
    }()

    @Test func everyValueTypeRoundTrips() throws {
        let freshness = Freshness(
            fetchedAt: Date(timeIntervalSince1970: 10), expiresAt: Date(timeIntervalSince1970: 70))
        let payload = try NodePayload.encode(Self.everyValue)
        let decoded = try NodePayload.decode(payload, freshness: freshness)
        #expect(decoded == Self.everyValue)
        #expect(decoded.freshness == freshness)
        #expect(decoded.attributes == Self.everyValue.attributes, "values compare equal, not only hash alike")
        for (name, value) in Self.everyValue.attributes {
            #expect(try NodePayload.attribute(name, in: payload) == value, "\(name)")
        }
        #expect(try NodePayload.attribute("missing", in: payload) == .null)
        // A to-one relationship's target key, read past every attribute and other relationship.
        func target(_ name: String) throws -> Value {
            var name = name
            return try name.withUTF8 { name in
                try payload.withUnsafeBytes { try NodePayload.target(named: UnsafeRawBufferPointer(name), in: $0) }
            }
        }
        #expect(try target("label") == .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))))
        #expect(try target("manager") == .null, "a to-one that leads nowhere")
        #expect(try target("albums") == .null, "a to-many")
        #expect(try target("missing") == .null)
    }

    @Test func nodesDecodedInARowShareTheirAttributeNames() throws {
        var names: [String] = []
        let nodes = [
            TestData.node("Band", 1, ["name": "Low"]), TestData.node("Band", 2, ["name": "Mogwai"]),
            TestData.node("Band", 3, ["name": "Muse", "country": "UK"]),
        ]
        let decoded = try nodes.map { node in
            try NodePayload.decode(NodePayload.encode(node), freshness: Freshness(), sharingNames: &names)
        }
        #expect(decoded == nodes)
        let buffers = decoded.map { node in node.attributes.keys.withUnsafeBufferPointer { $0.baseAddress } }
        #expect(buffers[0] == buffers[1], "the same names share one array")
        #expect(buffers[1] != buffers[2])
        #expect(names == ["country", "id", "name"])
    }

    @Test func everyDamagedByteIsAnErrorNotAnotherValue() throws {
        let payload = try NodePayload.encode(Self.everyValue)
        for offset in payload.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = payload
                damaged[offset] ^= mask
                #expect(throws: StoreChainSQLiteError.self, "byte \(offset) ^ \(mask)") {
                    try NodePayload.decode(damaged, freshness: Freshness())
                }
                #expect(throws: StoreChainSQLiteError.self) { try NodePayload.attribute("text", in: damaged) }
            }
        }
        for length in 0..<payload.count {
            #expect(throws: StoreChainSQLiteError.self, "the first \(length) bytes") {
                try NodePayload.decode(payload.prefix(length), freshness: Freshness())
            }
        }
    }

    /// Text is checked as it is read, not only by the checksum: bytes that are not UTF-8 under a
    /// checksum that matches them are an error, not text with replacement characters.
    @Test(arguments: [[0xFF, 0xB3], [0xC3, 0x41], [0xC0, 0xB3], [0xED, 0xA0], [0xC3, 0xC3]] as [[UInt8]])
    func textThatIsNotUTF8IsAnErrorUnderAMatchingChecksum(replacement: [UInt8]) throws {
        var bytes = [UInt8](try NodePayload.encode(Self.everyValue))
        let accent = Array("ó".utf8)
        let at = try #require(bytes.indices.dropLast().first { bytes[$0] == accent[0] && bytes[$0 + 1] == accent[1] })
        NodePayload.seal(&bytes)
        #expect(try NodePayload.decode(Data(bytes), freshness: Freshness()).attributes == Self.everyValue.attributes)
        bytes.replaceSubrange(at...(at + 1), with: replacement)
        NodePayload.seal(&bytes)
        #expect(throws: StoreChainSQLiteError.self) { try NodePayload.decode(Data(bytes), freshness: Freshness()) }
        #expect(throws: StoreChainSQLiteError.self) { try NodePayload.attribute("text", in: Data(bytes)) }
        #expect(try NodePayload.attribute("small", in: Data(bytes)) == .integer(-3), "other attributes still read")
    }

    @Test func integerKeysAreWrittenAsTheEncoderWritesThem() throws {
        for key in [0, 1, -1, 42, 1_000_000, Int.max, Int.min] {
            let id = ObjectID(entity: "Band", key: .integer(key))
            let encoded = String(decoding: try JSONEncoder().encode(Value.integer(key)), as: UTF8.self)
            #expect(try StoredNode.key(for: id) == "Band/" + encoded)
        }
    }

    /// A damaged node that a SQL-filtered read of a complete collection meets is dropped and the
    /// fetch goes to the backend, instead of the node being silently left out of the answer.
    @Test func aDamagedNodeOfACompleteCollectionIsFetchedAgainNotLeftOut() async throws {
        let model = try MusicFixture.model()
        let store = try MusicFixture.store()
        let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
        let disk = DiskCache(model: model, path: path)
        var write = CacheWrite()
        write.nodes = store.snapshot.nodes(of: "Album").map { node in
            var node = node
            node.freshness = Freshness(expiresAt: .distantFuture)
            return node
        }
        write.collections = ["Album": Freshness(expiresAt: .distantFuture)]
        _ = try await disk.storage.write(write)
        let request = try TestData.fetch("Album", where: "year >= 2000")
        guard case .objects(let matching) = try store.fetch(request), let victim = matching.first else {
            throw Failure("the fixture has albums from 2000 on")
        }
        try disk.storage.modify { db in
            let key = try StoredNode.key(for: victim.id)
            guard var payload = try Data.fetchOne(db, sql: "SELECT payload FROM nodes WHERE id = ?", arguments: [key])
            else { throw Failure("\(victim.id) is not in the file") }
            payload[payload.count - 1] ^= 0x04
            try db.execute(sql: "UPDATE nodes SET payload = ? WHERE id = ?", arguments: [payload, key])
        }
        let forwarded = Locked(0)
        let next = NextResponder { request, context in
            forwarded.withLock { $0 += 1 }
            return try await Chain(handlers: [], terminal: store).send(request, context: context)
        }
        let answer = try await disk.handle(.fetch(request), context: RequestContext(), next: next)
        #expect(answer.result == .fetched(try store.fetch(request)))
        #expect(forwarded.withLock { $0 } == 1, "the damaged collection was not used")
        #expect(try await disk.storage.collection("Album") == nil, "the collection is no longer complete")
    }
}
