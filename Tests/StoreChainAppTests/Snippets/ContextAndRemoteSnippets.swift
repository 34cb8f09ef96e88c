// swift-format-ignore-file

import Foundation
import StoreChain
import StoreChainHTTP

// More Swift code blocks of README.md (see ReadmeSnippets.swift).

func theObjectContext(chain: Chain, model: ObjectModel) async throws {
    func render(_ objects: [ManagedObject]) {}
    // snippet begin
    let context = ObjectContext(chain: chain, model: model)

    // Objects, uniqued: one ObjectID is one ManagedObject in a context.
    let request = FetchRequest(entity: "Band", relationshipKeyPathsForPrefetching: ["albums"])
    let bands = try await context.fetch(request)

    // Values that came with the fetch are read without another trip; anything else faults
    // through the chain (and a cache there may answer it).
    let name = try await bands[0].value("name")                    // a Value
    let founded: Date? = try await bands[0].value("founded")       // typed by the call site
    let albums = try await bands[0].relatedObjects("albums")      // prefetched: no request
    let band = try await albums[0].related("band")                 // the same object as bands[0]

    // Changes are tracked and saved together; temporary IDs become permanent everywhere.
    let title = "New"
    let album = try context.insert("Album", values: ["title": title, "year": 2026])
    try album.setRelated(bands[0], for: "band")                    // the inverse is kept in step
    try bands[1].set("Renamed", for: "name")                       // a String, Int?, Date, … or a Value
    try await context.save()                                        // one save request

    // Other result types come back as their own types.
    let count = try await context.count(for: FetchRequest(entity: "Album"))
    let ids = try await context.objectIDs(for: request)

    // The current result, then again after every change that affects it (only when it differs).
    for try await bands in context.observe(FetchRequest(entity: "Band")) { render(bands) }
    let current = try await context.observe(request).first()
    var changes = context.observe(request).timeout(.seconds(5)).makeAsyncIterator()
    let before = try await changes.next()
    try await context.save()
    let after = try await changes.next()                           // or `timed-out` after 5 s without a change
    // snippet end
    _ = (name, founded, band, count, ids, current, before, after)
}

func describingARemoteBackend(model: ObjectModel) throws {
    // snippet begin
    var band = RemoteEntityOptions(
        records: "data",                                       // where the records are in a list response
        attributes: ["name": "attributes.name",                // model attribute → remote key path
                     "founded": "attributes.founded_at"],      // epoch or ISO-8601 dates, numbers as strings: converted
        dateFormat: .epochSeconds)                             // how dates are written in request bodies
    band.fetch = [
        // {name} takes a `name BEGINSWITH…` (or `==`) comparison; the backend ignores case.
        RemoteEndpoint("GET /bands/search?name={name}",
                       bind: ["name": ParameterBinding("name", .beginsWith, caseInsensitive: true, required: true)]),
        // A paged list with a sort parameter; pages follow the Link header.
        RemoteEndpoint("GET /bands?page={page}&per_page={per_page}&sort={sort}",
                       sort: SortBinding(variable: "sort", values: ["name": "name", "-name": "-name"], tiesInKeyOrder: true),
                       paging: .pages(page: "page", perPage: "per_page", size: 100, first: 1)),
    ]
    band.get = "GET /bands/{id}"                               // object faults; a 404 means deleted upstream
    band.create = "POST /bands"; band.update = "PATCH /bands/{id}"; band.delete = "DELETE /bands/{id}"

    var album = RemoteEntityOptions(key: "album_id", relationships: ["band": .foreignKey("band_id")])
    album.fetch = [
        RemoteEndpoint("GET /bands/{band}/albums", bind: ["band": ParameterBinding("band.id")], records: "data"),
        RemoteEndpoint("GET /albums?cursor={cursor}&year_from={from}&year_to={to}",
                       bind: ["from": ParameterBinding("year", .atLeast), "to": ParameterBinding("year", .atMost)],
                       paging: .cursor(variable: "cursor", next: "next_cursor", limit: nil, size: 100),
                       records: "items"),
    ]
    let options = RemoteOptions(baseURL: URL(string: "https://api.example/v2")!,
                                entities: ["Band": band, "Album": album],
                                bearerTokenVariable: "MUSIC_TOKEN")   // sent as Authorization, never logged
    let remote = try RemoteResponder(model: model, options: options)
    let chain = Chain(terminal: remote) { /* handlers */ }
    // snippet end
    _ = chain
}
