import Benchmark
@_spi(Internals) import StoreChain

/// A typical app predicate, and JSON of about the same length as the parsing baseline.
private let predicateText = #"title BEGINSWITH[c] "s" AND year >= 1990 AND (price < 10.0 OR price == nil)"#
private let comparableJSON = #"{"title":{"prefix":"s","ci":true},"year":{"gte":1990},"price":[{"lt":10.0},null]}"#

/// 100,000 albums with varied titles, years and prices (about a third match).
private let albums = makeAlbums(100_000)

/// The same filter written by hand in Swift, reading the same nodes.
@inline(never)
private func handWrittenFilter(_ node: Node) -> Bool {
    guard case .string(let title)? = node.attributes["title"], title.lowercased().hasPrefix("s") else { return false }
    guard case .integer(let year)? = node.attributes["year"], year >= 1990 else { return false }
    switch node.attributes["price"] {
    case .double(let price)?: return price < 10
    case nil: return true
    default: return false
    }
}

func predicateBenchmarks() {
    Benchmark("Parse: predicate") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try FetchPredicate(format: predicateText))
        }
    }
    Benchmark("Parse: baseline JSON of the same length") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSONParser().parse(comparableJSON))
        }
    }

    let configuration = Benchmark.Configuration(maxDuration: .seconds(5), maxIterations: 50)
    Benchmark("Evaluate 100k: predicate", configuration: configuration) { benchmark in
        let filter = try CompiledPredicate(FetchPredicate(format: predicateText), entity: "Album", model: albumModel)
        let source = EmptyNodeSource()
        benchmark.startMeasurement()
        blackHole(albums.filter { filter.evaluate($0, in: source) }.count)
    }
    Benchmark("Evaluate 100k: baseline hand-written closure", configuration: configuration) { benchmark in
        blackHole(albums.filter(handWrittenFilter).count)
    }
}
