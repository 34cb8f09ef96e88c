import Benchmark
import Foundation
import StoreChain
import StoreChainHTTP

/// 10,000 band records the way the demo's v2 API writes them: nested attributes, epoch dates.
private let responseBody: Data = {
    var text = #"{"data": ["#
    for index in 0..<10_000 {
        if index > 0 { text += "," }
        text += #"{"id": \#(index), "attributes": {"name": "Band \#(index)", "founded_at": \#(600_000_000 + index), "#
        text += #""home_page": "https://music.example/bands/\#(index)", "country_code": "UK"}}"#
    }
    return Data((text + "]}").utf8)
}()

private let mappingModel: ObjectModel = {
    do {
        return try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("name", .string),
                    AttributeDescription("founded", .date, optional: true),
                    AttributeDescription("url", .url, optional: true),
                    AttributeDescription("country", .string, optional: true),
                ])
        ])
    } catch {
        fatalError("benchmark model is invalid: \(error)")
    }
}()

private let mapper: RemoteResponder = {
    let band = RemoteEntityOptions(
        records: "data",
        attributes: [
            "name": "attributes.name", "founded": "attributes.founded_at", "url": "attributes.home_page",
            "country": "attributes.country_code",
        ])
    let options = RemoteOptions(baseURL: URL(filePath: "/"), entities: ["Band": band])
    do {
        return try RemoteResponder(
            model: mappingModel, options: options, transport: StubTransport { _ in .status(500) })
    } catch {
        fatalError("benchmark options are invalid: \(error)")
    }
}()

func mappingBenchmarks() {
    let configuration = Benchmark.Configuration(maxDuration: .seconds(5), maxIterations: 100)
    Benchmark("Map 10k records: JSON to nodes", configuration: configuration) { _ in
        blackHole(try mapper.nodes(fromResponseBody: responseBody, entity: "Band"))
    }
    Benchmark("Map 10k records: baseline JSONSerialization alone", configuration: configuration) { _ in
        blackHole(try JSONSerialization.jsonObject(with: responseBody))
    }
}
