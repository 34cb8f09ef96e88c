import Foundation
import GRDB
import StoreChain

// Rows as the file stores them (payloads compressed when that is smaller, nodes in their binary
// layout, freshness in columns of its own), and reading them past a damaged one.
extension SQLiteCacheStorage {
    /// Decodes the rows of `entity`'s nodes; when some are damaged (and dropped) the read fails,
    /// since answering without them would leave them silently out of a complete collection.
    func decodeNodes(of entity: String, _ fetch: (Database) throws -> RowCursor) throws -> [Node] {
        let decoder = RowDecoder()
        let (nodes, dropped) = try decodeRows(in: "nodes", fetch) { row in try Self.node(row, decoder: decoder) }
        guard dropped == 0 else {
            throw StoreChainError(
                .cacheFile, "damaged cached objects of \(entity) were dropped from \(path)",
                suggestion: "nothing to do: they are fetched again")
        }
        return nodes
    }

    /// Decodes the rows `fetch` selects as they are read (no copy of each row is made first); a
    /// row that cannot be decoded (a damaged page that still passes SQLite's checks) is logged,
    /// deleted and treated as not cached, so one bad entry neither crashes the app nor disables
    /// the cache. A dropped node's entity no longer has its whole collection cached.
    func decodeRows<T>(
        in table: String, _ fetch: (Database) throws -> RowCursor, decode: (Row) throws -> T
    ) throws -> (decoded: [T], dropped: Int) {
        var damaged: [Int64] = []
        let decoded = try read { db in
            var decoded: [T] = []
            let rows = try fetch(db)
            while let row = try rows.next() {
                do {
                    decoded.append(try decode(row))
                } catch {
                    if let rowID = try? row.decode(Int64.self, forColumn: "row_id") { damaged.append(rowID) }
                    logger.warning("disk-cache: a damaged entry in \(table) of \(path) is dropped: \(error)")
                }
            }
            return decoded
        }
        if !damaged.isEmpty {
            let rowIDs = damaged.map(String.init).joined(separator: ",")
            _ = try? modify { db in
                if table == "nodes" {
                    try db.execute(
                        sql:
                            "DELETE FROM collections WHERE entity IN (SELECT entity FROM nodes WHERE rowid IN (\(rowIDs)))"
                    )
                }
                try db.execute(sql: "DELETE FROM \(table) WHERE rowid IN (\(rowIDs))")
            }
        }
        return (decoded, damaged.count)
    }

    /// A payload as stored (a node's binary layout, a query's JSON), compressed with zlib when
    /// that is smaller.
    struct Payload {
        let bytes: Data
        let compressed: Bool
        let rawSize: Int

        init(_ json: Data, compressing: Bool) {
            rawSize = json.count
            if compressing, let smaller = Zlib.compressIfSmaller(json) {
                bytes = smaller
                compressed = true
            } else {
                bytes = json
                compressed = false
            }
        }

        var arguments: StatementArguments { [bytes, compressed, rawSize, bytes.count] }
    }

    // Rows are decoded with `decode`, which throws, never with subscripts, which trap on a
    // value of the wrong type: a damaged file can hold anything.
    static func payload(_ row: Row, decoder: RowDecoder) throws -> Data {
        let columns = decoder.columns(of: row)
        let bytes = try row.decode(Data.self, at: columns.payload, column: "payload")
        guard try row.decode(Bool.self, at: columns.compressed, column: "compressed") else { return bytes }
        return try Zlib.decompress(bytes, originalSize: try row.decode(at: columns.rawSize, column: "raw_size"))
    }

    static func node(_ row: Row, decoder: RowDecoder) throws -> Node {
        var node = try NodePayload.decode(
            try payload(row, decoder: decoder), freshness: try freshness(row, decoder: decoder),
            sharingNames: &decoder.attributeNames)
        // The rows of one response share their freshness: one box for all of them.
        if let last = decoder.freshness, last == node.sharedFreshness {
            node.sharedFreshness = last
        } else {
            decoder.freshness = node.sharedFreshness
        }
        return node
    }

    /// What the rows of one read share: their columns' positions, the `rules` and
    /// `page_validators` columns (the rows of one response share their text, so each distinct
    /// text is decoded once per read), and the attribute names and freshness of the node decoded
    /// last, for the next one to share.
    final class RowDecoder {
        private var decodedRules: [String: ResponseFreshness] = [:]
        private var decodedValidators: [String: [PageValidator]] = [:]
        private var positions: ColumnPositions?
        var attributeNames: [String] = []
        var freshness: OutOfLine<Freshness>?

        /// Where the payload and freshness columns are: the same in every row of one statement.
        func columns(of row: Row) -> ColumnPositions {
            if let positions { return positions }
            let found = ColumnPositions(Array(row.columnNames))
            positions = found
            return found
        }

        func rules(_ text: String) throws -> ResponseFreshness {
            try Self.decode(text, known: &decodedRules)
        }

        func pageValidators(_ text: String) throws -> [PageValidator] {
            try Self.decode(text, known: &decodedValidators)
        }

        private static func decode<Decoded: Decodable>(_ text: String, known: inout [String: Decoded]) throws
            -> Decoded
        {
            if let decoded = known[text] { return decoded }
            let decoded = try JSONDecoder().decode(Decoded.self, from: Data(text.utf8))
            known[text] = decoded
            return decoded
        }
    }

    /// The positions of the payload and freshness columns in a statement's rows, found by name
    /// once per read: GRDB's lookup by name lowercases the name on every call, which took a
    /// seventh of the time of reading 100,000 cached objects.
    struct ColumnPositions {
        let payload: Int?, compressed: Int?, rawSize: Int?
        let fetchedAt: Int?, expiresAt: Int?, etag: Int?, lastModified: Int?, pageValidators: Int?, rules: Int?

        init(_ names: [String]) {
            payload = names.firstIndex(of: "payload")
            compressed = names.firstIndex(of: "compressed")
            rawSize = names.firstIndex(of: "raw_size")
            fetchedAt = names.firstIndex(of: "fetched_at")
            expiresAt = names.firstIndex(of: "expires_at")
            etag = names.firstIndex(of: "etag")
            lastModified = names.firstIndex(of: "last_modified")
            pageValidators = names.firstIndex(of: "page_validators")
            rules = names.firstIndex(of: "rules")
        }
    }

    static func freshness(_ row: Row, decoder: RowDecoder) throws -> Freshness {
        let columns = decoder.columns(of: row)
        return Freshness(
            fetchedAt: try row.decodeIfPresent(Double.self, at: columns.fetchedAt, column: "fetched_at").map(
                Date.init(timeIntervalSince1970:)),
            expiresAt: try row.decodeIfPresent(Double.self, at: columns.expiresAt, column: "expires_at").map(
                Date.init(timeIntervalSince1970:)),
            validators: Validators(
                etag: try row.decodeIfPresent(at: columns.etag, column: "etag"),
                lastModified: try row.decodeIfPresent(at: columns.lastModified, column: "last_modified"),
                pages: try row.decodeIfPresent(String.self, at: columns.pageValidators, column: "page_validators")
                    .map(decoder.pageValidators) ?? []),
            rules: try row.decodeIfPresent(String.self, at: columns.rules, column: "rules").map(decoder.rules))
    }

    static func arguments(_ freshness: Freshness) -> StatementArguments {
        FreshnessColumns(freshness).arguments
    }
}

extension Row {
    /// The value at `position`: a column the statement selected, found once by `ColumnPositions`.
    fileprivate func decode<Value: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: Value.Type = Value.self, at position: Int?, column: String
    ) throws -> Value {
        try decode(type, atIndex: try Self.require(position, column))
    }

    /// The value at `position`, or `nil` for NULL. (Decoding an optional type went through
    /// GRDB's generic path, which looked up type metadata for every row.)
    fileprivate func decodeIfPresent<Value: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: Value.Type = Value.self, at position: Int?, column: String
    ) throws -> Value? {
        let position = try Self.require(position, column)
        return hasNull(atIndex: position) ? nil : try decode(type, atIndex: position)
    }

    private static func require(_ position: Int?, _ column: String) throws -> Int {
        guard let position else { throw StoreChainSQLiteError("a cache read did not select the column '\(column)'") }
        return position
    }
}
