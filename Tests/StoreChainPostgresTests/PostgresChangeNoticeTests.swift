// The shared cache's tests: built with the Postgres trait (`.ci/run` enables every trait).
#if Postgres
    import Foundation
    import StoreChain
    import StoreChainSQLite
    import Testing

    @testable import StoreChainPostgres

    /// How a change is told to other processes: in notices PostgreSQL accepts (at most 8000 bytes),
    /// naming every object once, on a channel name PostgreSQL accepts.
    @Suite struct PostgresChangeNoticeTests {
        @Test func aLargeChangeIsSplitIntoNoticesThatFitAndNameEveryObjectOnce() throws {
            var write = CacheWrite()
            // Keys with slashes and quotes, which JSON escapes: the size is measured as encoded.
            write.nodes = (0..<1500).map { Node(id: ObjectID(entity: "Track", key: .string("a/\"b\"/\($0)"))) }
            write.invalidated = ["Track"]
            let removed = Set((0..<300).map { ObjectID(entity: "Album", key: .integer($0)) })

            let notices = PostgresChangeNotice.notices(for: write, removed: removed, from: "one", namespace: "music")

            #expect(notices.count > 1, "1800 keys do not fit one notice")
            let decoded = try notices.map { notice in
                #expect(notice.utf8.count <= PostgresChangeNotice.maxPayloadBytes, "\(notice.utf8.count) bytes")
                return try JSONDecoder().decode(PostgresChangeNotice.self, from: Data(notice.utf8))
            }
            let updated = try decoded.flatMap(\.updated).map { try StoredNode.id(forKey: $0) }
            let deleted = try decoded.flatMap(\.deleted).map { try StoredNode.id(forKey: $0) }
            #expect(updated == write.nodes.map(\.id))
            #expect(Set(deleted) == removed && deleted.count == removed.count)
            for notice in decoded {
                #expect(notice.from == "one" && notice.namespace == "music" && notice.entities == ["Album", "Track"])
            }
            // Full notices: each but the last lacks less than the room of one more key (and the
            // comma the first key of each list does without).
            let encoder = JSONEncoder()
            encoder.outputFormatting = .withoutEscapingSlashes
            let largestKey =
                try (updated + deleted).map { try encoder.encode(StoredNode.key(for: $0)).count }.max() ?? 0
            for notice in notices.dropLast() {
                #expect(
                    notice.utf8.count > PostgresChangeNotice.maxPayloadBytes - largestKey - 3,
                    "\(notice.utf8.count) bytes")
            }
        }

        @Test func aWriteThatChangesNothingOthersHoldSendsNoNotice() {
            var write = CacheWrite()
            write.nodes = [Node(id: ObjectID(entity: "Track", key: .integer(1)))]
            #expect(PostgresChangeNotice.notices(for: write, removed: [], from: "one", namespace: "").isEmpty)
            write.isRefresh = true
            #expect(PostgresChangeNotice.notices(for: write, removed: [], from: "one", namespace: "").count == 1)
        }

        @Test func channelNamesStayWithinPostgreSQLsIdentifierLimit() {
            #expect(PostgresChangeNotice.channel(schema: "music") == "storechain_changes_music")
            let long = String(repeating: "s", count: 60)
            let channel = PostgresChangeNotice.channel(schema: long)
            #expect(channel.utf8.count <= 63 && channel.hasPrefix("storechain_changes_"))
            #expect(
                channel != PostgresChangeNotice.channel(schema: long + "t"), "different schemas, different channels")
        }
    }
#endif
