import Benchmark
import Foundation
import GRDB
import StoreChain
import StoreChainSQLite
import Synchronization

/// Albums whose tracks name them by a to-one (the tracks' foreign key): an album's `tracks` is
/// answered from the complete Track collection the disk cache holds, as after an app's restart.
private let faultModel: ObjectModel = {
    do {
        return try ObjectModel([
            EntityDescription(
                "Album", key: "id", attributes: [AttributeDescription("id", .integer)],
                relationships: [RelationshipDescription("tracks", .toMany(ordered: false), "Track", inverse: "album")]),
            EntityDescription(
                "Track", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("album", .toOne, "Album", inverse: "tracks")]),
        ])
    } catch {
        fatalError("benchmark model is invalid: \(error)")
    }
}()

/// 3,500 tracks, 10 an album (the Chinook catalog's size).
private let albumCount = 350
private let fresh = Freshness(expiresAt: .distantFuture)

func relationshipFaultBenchmarks() {
    let faults = Benchmark.Configuration(maxDuration: .seconds(3))
    let context = RequestContext()
    let unreachable = NextResponder { request, _ in
        throw StoreChainError(.unavailable, "\(request) was not answered by the cache")
    }
    var write = CacheWrite()
    write.nodes =
        (0..<albumCount).map {
            Node(id: ObjectID(entity: "Album", key: .integer($0)), attributes: ["id": .integer($0)])
        }
        + (0..<(albumCount * 10)).map { track in
            Node(
                id: ObjectID(entity: "Track", key: .integer(track)),
                attributes: ["id": .integer(track), "name": .string("Track \(track)")],
                relationships: ["album": .toOne(ObjectID(entity: "Album", key: .integer(track % albumCount)))])
        }
    write.nodes = write.nodes.map { node in
        var node = node
        node.freshness = fresh
        return node
    }
    write.collections = ["Track": fresh]
    let catalog = write
    let path = temporaryPath("faults.sqlite")
    let disk = DiskCache(model: faultModel, path: path)
    let rawPool = try? DatabasePool(path: path)
    let written = Mutex(false)
    /// Writes the catalog once, before the first measurement.
    @Sendable func prepare() async throws {
        guard !written.withLock({ $0 }) else { return }
        _ = try await disk.storage.write(catalog)
        written.withLock { $0 = true }
    }
    let album = 42
    // The rows of album 42's tracks, by primary key: the least a fault that finds them can cost.
    let memberKeys = (0..<10).map { #"Track/{"integer":\#(album + $0 * albumCount)}"# }
    Benchmark("Disk cache relationship fault: baseline raw GRDB SELECT of the members' rows", configuration: faults) {
        benchmark in
        guard let rawPool else { fatalError("cannot open \(path)") }
        try await prepare()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(
                try rawPool.read { db in
                    try Row.fetchAll(
                        db, sql: "SELECT payload FROM nodes WHERE id IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        arguments: StatementArguments(memberKeys))
                })
        }
    }
    let fault = StoreRequest.relationshipFault(ObjectID(entity: "Album", key: .integer(album)), relationship: "tracks")
    Benchmark("Disk cache relationship fault: album.tracks from the complete collection", configuration: faults) {
        benchmark in
        try await prepare()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await disk.handle(fault, context: context, next: unreachable))
        }
    }
}
