import Benchmark
import Foundation
import StoreChain

/// Tracks as a CLI data file holds them.
private let trackModel: ObjectModel = {
    do {
        return try ObjectModel([
            EntityDescription(
                "Track", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("title", .string),
                    AttributeDescription("number", .integer),
                    AttributeDescription("seconds", .integer, optional: true),
                    AttributeDescription("genre", .string, optional: true),
                ])
        ])
    } catch {
        fatalError("benchmark model is invalid: \(error)")
    }
}()

/// A JSON data file of 100,000 tracks (about 9 MB), written once per machine in small chunks so
/// that writing it does not count towards a benchmark's peak memory.
private func tracksFile() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appending(path: "storechain-bench-tracks-100k-v1.json")
    if FileManager.default.fileExists(atPath: url.path) { return url }
    let partial = url.appendingPathExtension("partial-\(UUID())")
    guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: partial.path])
    }
    let handle = try FileHandle(forWritingTo: partial)
    let genres = ["Rock", "Jazz", "Blues", "Metal", "Latin", "Pop", "Classical"]
    try handle.write(contentsOf: Data(#"{"Track": ["#.utf8))
    for start in stride(from: 0, to: 100_000, by: 1_000) {
        var chunk = ""
        for index in start..<start + 1_000 {
            if index > 0 { chunk += ",\n" }
            chunk +=
                #"{"id": \#(index), "title": "Track number \#(index) of the catalog", "number": \#(index % 20 + 1), "#
            chunk += #""seconds": \#(120 + index % 400), "genre": "\#(genres[index % genres.count])"}"#
        }
        try handle.write(contentsOf: Data(chunk.utf8))
    }
    try handle.write(contentsOf: Data("]}\n".utf8))
    try handle.close()
    // Another process may have written it meanwhile: either copy is the same.
    if (try? FileManager.default.moveItem(at: partial, to: url)) == nil {
        try? FileManager.default.removeItem(at: partial)
    }
    return url
}

/// How far resident memory grows above where it started while `body` runs, in bytes: the
/// kernel's high-water mark (VmHWM), reset first, so a short-lived peak is not missed as it can
/// be by sampling.
private func peakGrowth<T>(_ body: () async throws -> T) async throws -> (T, Int) {
    func kilobytes(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let value = Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).dropLast(3))
        else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: "/proc/self/status"]) }
        return value
    }
    // Writing 5 to clear_refs resets the high-water mark to the current resident size.
    try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let start = try kilobytes("VmRSS")
    let result = try await body()
    return (result, (try kilobytes("VmHWM") - start) * 1024)
}

/// Peak memory growth, reported in bytes.
let peakMemory = BenchmarkMetric.custom("peak memory growth (bytes)", useScalingFactor: false)

func memoryBenchmarks() {
    let once = Benchmark.Configuration(
        metrics: [peakMemory, .wallClock], warmupIterations: 0, maxDuration: .seconds(1), maxIterations: 1)
    Benchmark("Peak memory 100k dataset: baseline the JSON file's bytes", configuration: once) { benchmark in
        let url = try tracksFile()
        let (data, growth) = try await peakGrowth { try Data(contentsOf: url, options: .uncached) }
        blackHole(data)
        benchmark.measurement(peakMemory, growth)
    }
    Benchmark("Peak memory 100k dataset: loaded by JSONFileStore", configuration: once) { benchmark in
        let url = try tracksFile()
        let (store, growth) = try await peakGrowth { try JSONFileStore(contentsOf: url, model: trackModel) }
        blackHole(store)
        benchmark.measurement(peakMemory, growth)
    }

    let everything = FetchRequest(entity: "Album", sortDescriptors: [FetchSortDescriptor("title")])
    Benchmark("Peak memory 100k fetch: baseline InMemoryStore", configuration: once) { benchmark in
        let (result, growth) = try await peakGrowth {
            try InMemoryStore(model: albumModel, nodes: makeAlbums(100_000)).fetch(everything)
        }
        blackHole(result)
        benchmark.measurement(peakMemory, growth)
    }
    Benchmark("Peak memory 100k fetch: through the memory cache", configuration: once) { benchmark in
        let (result, growth) = try await peakGrowth {
            let memory = MemoryCache(model: albumModel, limits: .init(maxObjects: 100_000, maxBytes: 1 << 30))
            _ = await memory.storage.write(completeCollection(makeAlbums(100_000)))
            return try await memory.handle(.fetch(everything), context: RequestContext(), next: unanswered)
        }
        blackHole(result)
        benchmark.measurement(peakMemory, growth)
    }
}
