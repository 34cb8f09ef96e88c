import Benchmark
import Foundation
import GRDB
import StoreChain
import StoreChainSQLite

/// Albums with a key, a title, a year and (mostly) a price: the scale benchmarks' model.
let albumModel: ObjectModel = {
    do {
        return try ObjectModel([
            EntityDescription(
                "Album", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("title", .string),
                    AttributeDescription("year", .integer, optional: true),
                    AttributeDescription("price", .double, optional: true),
                ])
        ])
    } catch {
        fatalError("benchmark model is invalid: \(error)")
    }
}()

/// `count` albums with varied titles, years and prices.
func makeAlbums(_ count: Int) -> [Node] {
    let titles = ["Silver Night", "summer Road", "Quiet Light", "Secret Heart", "Paper Home"]
    return (0..<count).map { index in
        var attributes: AttributeValues = [
            "id": .integer(index), "title": .string(titles[index % titles.count] + " \(index)"),
            "year": .integer(1960 + index % 60),
        ]
        if index % 7 != 0 { attributes["price"] = .double(Double(500 + (index * 37) % 1000) / 100) }
        return Node(id: ObjectID(entity: "Album", key: .integer(index)), attributes: attributes)
    }
}

/// A filtered, sorted fetch an app makes of a cached collection (about 30% of the objects match).
private let scaleRequest: StoreChain.FetchRequest = {
    do {
        return FetchRequest(
            entity: "Album", predicate: try FetchPredicate(format: #"title BEGINSWITH[c] "s" AND year >= 1990"#),
            sortDescriptors: [FetchSortDescriptor("title")])
    } catch {
        fatalError("benchmark predicate is invalid: \(error)")
    }
}()

let unanswered = NextResponder { request, _ in
    throw StoreChainError(.unavailable, "\(request) was not answered by the cache")
}

/// A cache write holding `nodes` as the entity's whole collection.
func completeCollection(_ nodes: [Node]) -> CacheWrite {
    var write = CacheWrite()
    write.nodes = nodes.map { node in
        var node = node
        node.freshness = Freshness(expiresAt: .distantFuture)
        return node
    }
    write.collections = ["Album": Freshness(expiresAt: .distantFuture)]
    return write
}

/// The same album as an app would map it with GRDB by hand.
private struct AlbumRow {
    var id: Int
    var title: String
    var year: Int?
    var price: Double?
}

func scaleBenchmarks() {
    for (label, count) in [("1k", 1_000), ("10k", 10_000), ("100k", 100_000)] {
        let configuration = Benchmark.Configuration(maxDuration: .seconds(2), maxIterations: count > 10_000 ? 10 : 100)
        let context = RequestContext()

        Benchmark("Scale \(label) from memory: baseline InMemoryStore", configuration: configuration) { benchmark in
            let store = InMemoryStore(model: albumModel, nodes: makeAlbums(count))
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try store.fetch(scaleRequest)) }
        }
        Benchmark("Scale \(label) from memory: filtered sorted fetch", configuration: configuration) { benchmark in
            let memory = MemoryCache(model: albumModel, limits: .init(maxObjects: count, maxBytes: 1 << 30))
            _ = await memory.storage.write(completeCollection(makeAlbums(count)))
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await memory.handle(.fetch(scaleRequest), context: context, next: unanswered))
            }
        }

        Benchmark("Scale \(label) from disk: baseline raw GRDB rows and a closure", configuration: configuration) {
            benchmark in
            let pool = try DatabasePool(path: temporaryPath("scale-baseline.sqlite"))
            try await pool.write { db in
                try db.execute(
                    sql: "CREATE TABLE albums (id INTEGER PRIMARY KEY, title TEXT, year INTEGER, price REAL)")
                for node in makeAlbums(count) {
                    try db.execute(
                        sql: "INSERT INTO albums VALUES (?, ?, ?, ?)",
                        arguments: [
                            node.attributes["id"]?.integerValue, node.attributes["title"]?.stringValue,
                            node.attributes["year"]?.integerValue, node.attributes["price"]?.numericValue,
                        ])
                }
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let rows = try await pool.read { db in
                    try Row.fetchAll(
                        db, sql: "SELECT id, title, year, price FROM albums WHERE year >= ?", arguments: [1990]
                    )
                    .map { row in
                        AlbumRow(id: row["id"], title: row["title"], year: row["year"], price: row["price"])
                    }
                }
                blackHole(rows.filter { $0.title.lowercased().hasPrefix("s") }.sorted { $0.title < $1.title })
            }
        }
        Benchmark("Scale \(label) from disk: filtered sorted fetch", configuration: configuration) { benchmark in
            let path = temporaryPath("scale-cache.sqlite")
            _ = try await DiskCache(model: albumModel, path: path).storage.write(completeCollection(makeAlbums(count)))
            // A fresh chain, as after a restart: only the file holds the collection.
            let disk = DiskCache(model: albumModel, path: path)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await disk.handle(.fetch(scaleRequest), context: context, next: unanswered))
            }
        }
    }
}

/// Writing a fetched collection of 10k albums to the disk cache, against inserting the same
/// rows with GRDB by hand (one compiled statement, one transaction).
func diskWriteBenchmarks() {
    let albums = makeAlbums(10_000)
    let configuration = Benchmark.Configuration(maxDuration: .seconds(2), maxIterations: 50)
    Benchmark("Disk write 10k: baseline raw GRDB inserts of the rows", configuration: configuration) { benchmark in
        let pool = try DatabasePool(path: temporaryPath("write-baseline.sqlite"))
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE albums (id INTEGER PRIMARY KEY, title TEXT, year INTEGER, price REAL)")
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try await pool.write { db in
                let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO albums VALUES (?, ?, ?, ?)")
                for node in albums {
                    try insert.execute(arguments: [
                        node.attributes["id"]?.integerValue, node.attributes["title"]?.stringValue,
                        node.attributes["year"]?.integerValue, node.attributes["price"]?.numericValue,
                    ])
                }
            }
        }
    }
    Benchmark("Disk write 10k: a complete collection through the storage", configuration: configuration) {
        benchmark in
        let storage = DiskCache(model: albumModel, path: temporaryPath("write-cache.sqlite")).storage
        let write = completeCollection(albums)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try await storage.write(write)) }
    }
}

extension Value {
    fileprivate var integerValue: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
