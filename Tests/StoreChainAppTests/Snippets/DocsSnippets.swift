// swift-format-ignore-file

import CustomHandlerExample
import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainPipeline

// The Swift code blocks of Docs/Pipelines.md and Plugins/README.md (see ReadmeSnippets.swift).
// `Band` and `Album` here are the types the StoreChainModelPlugin generates for this target.

func registeringHandlerAndInterceptorTypes() throws {
    // snippet begin
    // FixedBandsOptions and FixedBandsHandler are in Examples/CustomHandler.
    var registry = HandlerRegistry.standard
    registry.register("fixed-bands", options: FixedBandsOptions.self, placement: .anywhere) { options, context in
        FixedBandsHandler(model: context.model, bands: options.nodes)   // context: model, folder, environment
    }

    // An HTTP interceptor type for the remote terminal's `interceptors:` list.
    struct ClientIDOptions: Decodable, Sendable { var id: String }
    struct ClientID: HTTPInterceptor {
        let id: String
        func intercept(
            _ request: TransportRequest, context: RequestContext,
            next: (TransportRequest) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var request = request
            request.headers["X-Client-Id"] = id
            return try await next(request)
        }
    }
    registry.registerInterceptor("client-id", options: ClientIDOptions.self) { options, _ in ClientID(id: options.id) }
    let pipeline = try Pipeline.load(contentsOf: URL(filePath: "app.pipeline.yml"), registry: registry)
    // snippet end
    _ = pipeline
}

func usingGeneratedTypes(context: ObjectContext) async throws {
    func show(_ albums: [Album]) {}
    // snippet begin
    let bands = try await Band.fetch(context, where: Band.Keys.name.beginsWith("the", options: .caseInsensitive))
    let album = try Album.insert(into: context, title: "Bloom", band: bands[0])
    try album.setYear(2012)
    try await context.save()
    let albums = try await Album.fetch(context, sortedBy: [.year.descending, .title], limit: 10, prefetching: [.band])
    let count = try await Album.count(context, where: Album.Keys.year >= 2000)
    for try await newest in Album.observe(context, sortedBy: [.year.descending], limit: 5) { show(newest) }
    // snippet end
    _ = (albums, count)
}

func usingFoundationPredicates(context: ObjectContext) async throws {
    // snippet begin
    let icelandic = try await Album.fetch(
        context, where: #Predicate { $0.band.country == "IS" && ($0.year ?? 0) >= 1999 },
        sortBy: [SortDescriptor(\.year, order: .reverse)])
    let long = try await Track.count(context, where: #Predicate { (300...600).contains($0.seconds) })
    // An optional attribute (`year: Int?`) is tested with a value standing in for nil:
    let nineties = try await Album.count(context, where: #Predicate { (1990...1999).contains($0.year ?? 0) })
    let named = try await Band.fetch(context, where: #Predicate { $0.country?.starts(with: "U") == true })
    let busy = try await Band.fetch(context, where: #Predicate { $0.albums.contains { $0.year == 1999 } })
    // snippet end
    _ = (icelandic, long, nineties, named, busy)
}

func readingAndAssigningValues(album: Album) async throws {
    // snippet begin
    if let values = album.loaded { print(values.title, values.year ?? 0) }   // nil while a fault
    try await album.update { $0.year = 2012; $0.price = 9.5 }                // context.save() sends it
    // snippet end
}

func followingLiveResults(context: ObjectContext, bands: [Band]) throws {
    // snippet begin
    let albums = LiveResults(Album.observe(context, where: Album.Keys.year >= 2000), updatesOnMainActor: true)
    let band = try LiveObject(bands[0], updatesOnMainActor: true)
    // SwiftUI: ForEach(albums.objects, id: \.objectID) { Text($0.loaded?.title ?? "…") }; Text(band.values?.name ?? "…")
    // snippet end
    _ = (albums, band)
}
