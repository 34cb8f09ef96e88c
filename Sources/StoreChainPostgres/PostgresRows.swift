import Foundation
import PostgresNIO
import StoreChain
import StoreChainSQLite

// The rows the PostgreSQL cache writes and reads: nodes as column arrays, freshness as text.

/// The nodes of one write as column arrays, for one `INSERT … SELECT FROM unnest(…)`. A node
/// written twice in one write keeps its last version (one statement may not update a row twice).
struct NodeRows {
    var keys: [String] = []
    var entities: [String] = []
    var payloads: [ByteBuffer] = []
    var freshness: [String] = []
    var sizes: [Int32] = []

    init(_ nodes: [Node]) throws {
        var positions: [String: Int] = [:]
        // The nodes of one response share their freshness: each distinct one is encoded once.
        var encoded: [Freshness: String] = [:]
        for node in nodes where !node.id.isTemporary {
            let key = try StoredNode.key(for: node.id)
            let payload = try NodePayload.encode(node)
            let nodeFreshness = node.freshness ?? Freshness(expiresAt: .distantPast)
            let text = try encoded[nodeFreshness] ?? RowEncoder.text(nodeFreshness)
            encoded[nodeFreshness] = text
            if let position = positions[key] {
                (payloads[position], freshness[position], sizes[position]) =
                    (ByteBuffer(bytes: payload), text, Int32(clamping: payload.count))
                continue
            }
            positions[key] = keys.count
            keys.append(key)
            entities.append(node.id.entity)
            payloads.append(ByteBuffer(bytes: payload))
            freshness.append(text)
            sizes.append(Int32(clamping: payload.count))
        }
    }

    func keys(of entity: String) -> [String] {
        zip(keys, entities).filter { $0.1 == entity }.map(\.0)
    }
}

/// Freshness as the text stored in a row.
enum RowEncoder {
    static func text(_ freshness: Freshness) throws -> String {
        String(decoding: try JSONEncoder().encode(freshness), as: UTF8.self)
    }
}

/// Decodes the freshness texts of one read: the rows of one response share their text, so each
/// distinct one is decoded once.
struct RowDecoder {
    private var decoded: [String: Freshness] = [:]

    mutating func freshness(_ text: String) throws -> Freshness {
        if let known = decoded[text] { return known }
        let freshness = try JSONDecoder().decode(Freshness.self, from: Data(text.utf8))
        decoded[text] = freshness
        return freshness
    }
}
