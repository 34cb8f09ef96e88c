import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTestSupport
import StoreChainTesting
import Testing

#if Postgres
    import StoreChainPostgres
#endif

/// Our storages run through the conformance suite a user's own storage would, and a storage
/// that breaks a rule is caught by name.
@Suite struct CacheStorageConformanceTests {
    @Test(arguments: CacheKind.allCases)
    func ourStoragesKeepEveryRule(_ kind: CacheKind) async throws {
        let failures =
            switch kind {
            case .memory: await CacheStorageConformance.check { MemoryCacheStorage() }
            case .disk:
                await CacheStorageConformance.check {
                    SQLiteCacheStorage(
                        path: try TemporaryFolder.create("conformance").appending(path: "cache.sqlite").path)
                }
            #if Postgres
                case .postgres:
                    await CacheStorageConformance.check {
                        try PostgresCacheStorage(
                            address: try PostgresAddress(url: try TestPostgres.url()),
                            schema: TestPostgres.freshSchema())
                    }
            #endif
            }
        #expect(failures.isEmpty, "\(failures)")
        #expect(CacheStorageConformance.rules.count >= 10)
    }

    @Test func aStorageThatKeepsDeletedObjectsFailsByName() async {
        let failures = await CacheStorageConformance.check { DeletionDroppingStorage() }
        #expect(failures.map(\.rule) == ["a deleted object leaves every stored answer"], "\(failures)")
        #expect(failures.first?.problem.contains("the backend holds") == true, "\(failures)")
    }

    @Test func aStorageThatForgetsNothingOnClearFailsByName() async {
        let failures = await CacheStorageConformance.check(only: ["clear forgets everything"]) {
            DeletionDroppingStorage(clears: false)
        }
        #expect(failures.map(\.rule) == ["clear forgets everything"], "\(failures)")
    }

    @Test func aStorageThatIgnoresAWritesConditionFailsByName() async {
        let failures = await CacheStorageConformance.check { ConditionIgnoringStorage() }
        #expect(failures.map(\.rule) == ["a write whose condition fails writes nothing"], "\(failures)")
    }
}

/// A storage written before `CacheWrite.condition` existed: it applies every write.
private final class ConditionIgnoringStorage: ForwardingCacheStorage {
    let inner = MemoryCacheStorage()

    func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        var write = write
        write.condition = nil
        return await inner.write(write)
    }
}

/// A memory storage with a bug a storage author could make: writes keep the objects they
/// should remove (and, optionally, `clear` does nothing).
private final class DeletionDroppingStorage: ForwardingCacheStorage {
    let inner = MemoryCacheStorage()
    private let clears: Bool

    init(clears: Bool = true) {
        self.clears = clears
    }

    func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        var write = write
        write.removed = []
        return await inner.write(write)
    }
    func clear() async throws { if clears { await inner.clear() } }
}
