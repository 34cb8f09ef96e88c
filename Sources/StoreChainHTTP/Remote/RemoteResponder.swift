import Foundation
@_spi(Internals) import StoreChain

/// The terminal that talks to a REST backend.
///
/// For each fetch it picks the endpoint that pushes down the most of the request, reads every
/// page, maps the JSON records to nodes, loads the related objects the predicate and sort need,
/// and applies the rest of the request in memory, so the answer is exactly what the request
/// asks. Faults use get-by-key endpoints (a 404 means the object is gone); saves map to
/// POST / PATCH / DELETE templates.
///
/// ```swift
/// let remote = try RemoteResponder(model: model, options: options)
/// let chain = Chain(terminal: remote) { … }
/// ```
public final class RemoteResponder: UpstreamCounting, PagedResponder {
    /// What answers say answered them (`ResponseInfo.answeredBy`).
    private static let answerer = "remote"
    public var name: String { Self.answerer }
    /// The model of the objects it maps records to.
    public let model: ObjectModel
    /// The backend's address, endpoints and mapping.
    public let options: RemoteOptions
    /// The backend's address and a digest of the address and the entity mapping: a disk cache
    /// keeps data from another backend, or mapped another way, apart. Headers and tokens are
    /// not part of it, so a refreshed token keeps the cache.
    public let cacheNamespace: String?
    /// Every HTTP exchange with the backend.
    let exchange: RemoteExchange
    /// Reads endpoints' listings, page after page.
    let listings: ListingReader
    /// What every HTTP exchange passes through, outermost first.
    public var interceptors: [any HTTPInterceptor] { exchange.interceptors }
    let mapper: RecordMapper
    let planners: [String: QueryPlanner]

    /// Requests and bytes exchanged so far.
    public typealias Traffic = UpstreamTraffic

    /// Checks the options against the model (every entity, attribute, relationship and
    /// template), and reads the bearer token from the environment. Every HTTP exchange passes
    /// through `interceptors`, the first outermost.
    public init(
        model: ObjectModel, options: RemoteOptions, transport: any HTTPTransport = AsyncHTTPClientTransport(),
        interceptors: [any HTTPInterceptor] = [], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StoreChainError) {
        self.model = model
        self.options = options
        self.cacheNamespace =
            "remote \(RemoteError.redacted(options.baseURL)) #\(Fingerprint.hex(of: (options.baseURL, options.entities)))"
        self.mapper = RecordMapper(
            model: model, entities: options.entities, included: options.included, baseURL: options.baseURL,
            getTemplates: options.entities.compactMapValues { $0.get.flatMap { try? RequestTemplate($0) } })
        if let problem = Self.problems(in: options, model: model).first { throw problem }
        var planners: [String: QueryPlanner] = [:]
        for (name, entityOptions) in options.entities {
            planners[name] = try QueryPlanner(
                entity: try model.requireEntity(name), options: entityOptions, model: model)
        }
        self.planners = planners
        let authorization: String?
        if let token = options.bearerToken, !token.isEmpty {
            authorization = "Bearer \(token)"
        } else if let variable = options.bearerTokenVariable {
            guard let token = environment[variable], !token.isEmpty else {
                throw StoreChainError(
                    .invalidRequest, "the bearer token variable \(variable) is not set",
                    suggestion: "export \(variable)=<token> before starting")
            }
            authorization = "Bearer \(token)"
        } else {
            authorization = nil
        }
        exchange = RemoteExchange(
            options: options, transport: transport, interceptors: interceptors, authorization: authorization)
        listings = ListingReader(exchange: exchange, mapper: mapper, options: options, name: Self.answerer)
    }

    /// Every problem of the mapping against the model — entities, attributes, relationships,
    /// templates, bindings, paging and sort variables — each with its key path under the options
    /// (`entities.Band.attributes.nam`), so all of them can be reported at once.
    public static func problems(in options: RemoteOptions, model: ObjectModel) -> [StoreChainError] {
        var problems: [StoreChainError] = []
        for name in options.entities.keys.sorted() {
            guard let entityOptions = options.entities[name] else { continue }
            let found = mappingProblems(entityOptions, named: name, model: model, all: options.entities)
            problems += found
            guard found.isEmpty, let entity = model.entity(named: name) else { continue }
            do throws(StoreChainError) {
                _ = try QueryPlanner(entity: entity, options: entityOptions, model: model)
            } catch {
                problems.append(error.located(.init(path: "entities.\(name)")))
            }
        }
        if let changes = options.changes { problems += changesProblems(changes, model: model) }
        for (type, entity) in (options.included?.types ?? [:]).sorted(by: { $0.key < $1.key })
        where model.entity(named: entity) == nil {
            problems.append(
                StoreChainError(
                    .invalidPipeline,
                    "included records of type '\(type)' are said to be '\(entity)', which the model lacks",
                    at: .init(path: "included.types.\(type)"),
                    suggestion: Suggestion.didYouMean(entity, in: model.entities.map(\.name))))
        }
        return problems
    }

    private static func changesProblems(_ changes: RemoteChangesOptions, model: ObjectModel) -> [StoreChainError] {
        var problems: [StoreChainError] = []
        do throws(StoreChainError) {
            _ = try RequestTemplate(changes.request)
        } catch {
            problems.append(error.located(.init(path: "changes.request")))
        }
        for (backendName, entity) in changes.entityNames.sorted(by: { $0.key < $1.key })
        where model.entity(named: entity) == nil {
            problems.append(
                StoreChainError(
                    .unknownEntity,
                    "the change feed maps '\(backendName)' to entity '\(entity)', which the model does not have",
                    at: .init(path: "changes.entity-names.\(backendName)"),
                    suggestion: Suggestion.didYouMean(entity, in: model.entities.map(\.name))))
        }
        return problems
    }

    private static func mappingProblems(
        _ options: RemoteEntityOptions, named name: String, model: ObjectModel, all: [String: RemoteEntityOptions]
    ) -> [StoreChainError] {
        let path = "entities.\(name)"
        guard let entity = model.entity(named: name) else {
            return [
                StoreChainError(
                    .unknownEntity, "the remote mapping names entity '\(name)', which the model does not have",
                    at: .init(path: path), suggestion: Suggestion.didYouMean(name, in: model.entities.map(\.name)))
            ]
        }
        var problems: [StoreChainError] = []
        for attribute in options.attributes.keys.sorted() where entity.attribute(named: attribute) == nil {
            problems.append(
                StoreChainError(
                    .invalidRequest,
                    "the remote mapping of '\(name)' names attribute '\(attribute)', which the model does not have",
                    at: .init(path: "\(path).attributes.\(attribute)"),
                    suggestion: Suggestion.didYouMean(attribute, in: entity.attributes.map(\.name))))
        }
        for relationship in options.relationships.keys.sorted() where entity.relationship(named: relationship) == nil {
            problems.append(
                StoreChainError(
                    .invalidRequest,
                    "the remote mapping of '\(name)' names relationship '\(relationship)', which the model does not have",
                    at: .init(path: "\(path).relationships.\(relationship)"),
                    suggestion: Suggestion.didYouMean(relationship, in: entity.relationships.map(\.name))))
        }
        let templates =
            [("get", options.get), ("create", options.create), ("update", options.update), ("delete", options.delete)]
            .compactMap { key, template in template.map { ("\(path).\(key)", $0) } }
            + options.fetch.enumerated().map { ("\(path).fetch[\($0.offset)].request", $0.element.request) }
        for (location, template) in templates {
            do throws(StoreChainError) {
                _ = try RequestTemplate(template)
            } catch {
                problems.append(error.located(.init(path: location)))
            }
        }
        for (relationship, mapping) in options.relationships.sorted(by: { $0.key < $1.key }) {
            if case .link = mapping, let destination = entity.relationship(named: relationship)?.destination {
                let get = all[destination]?.get
                if (get.flatMap { try? RequestTemplate($0) }?.pathVariables.count) != 1 {
                    problems.append(
                        StoreChainError(
                            .invalidRequest,
                            "'\(relationship)' is read from links to \(destination) objects, but \(destination) declares "
                                + (get.map { "the get endpoint '\($0)', which has no single path variable" }
                                    ?? "no get endpoint"),
                            at: .init(path: "\(path).relationships.\(relationship).link"),
                            suggestion:
                                "declare \(destination)'s get endpoint as its links are written, such as "
                                + "get: GET /\(destination.lowercased())s/{id}/"))
                }
            }
            guard case .endpoint(let text, _, let style) = mapping else { continue }
            let location = "\(path).relationships.\(relationship).endpoint"
            do throws(StoreChainError) {
                problems += EndpointProblems.pagingProblems(
                    style, of: try RequestTemplate(text), at: "\(location).paging")
            } catch {
                problems.append(error.located(.init(path: location)))
            }
        }
        for (index, endpoint) in options.fetch.enumerated() {
            problems += EndpointProblems.problems(
                of: endpoint, at: "\(path).fetch[\(index)]", entity: entity, model: model)
        }
        return problems
    }

    /// Requests and bytes exchanged so far.
    public var traffic: Traffic {
        exchange.traffic
    }

    /// A chain with no pager reads this backend's listings one page at a time, at most
    /// `max-pages` for one fetch (`RemoteOptions.maxPages`).
    public var defaultPagination: PaginationOptions {
        PaginationOptions(maxPages: options.maxPages, concurrency: 1)
    }

    /// The query engine's loader over this backend, for `explain`'s estimates of related reads.
    var related: RelatedLoader {
        RelatedLoader(model: model, backend: self)
    }

    /// Runs off the caller's executor (`@concurrent`): building requests, parsing and mapping
    /// JSON and following pages must not run on the main actor of an app that fetches from it.
    @concurrent
    public func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        // Inside a chain the request stops at the seam below the caches; outside one it is refused too.
        if context.effectiveCachePolicy(for: request) == .cacheOnly, request.kind != .save {
            throw StoreChainError.refusingCacheOnly(request)
        }
        return switch request {
        case .fetch, .revalidation(.fetch, _):
            // Every chain has a pager above this terminal, which asks for pages; the terminal has
            // no chain of its own to fall back on (one exchange per request).
            throw StoreChainError(
                .invalidRequest, "the remote terminal answers a fetch a page at a time, and a whole fetch reached it",
                suggestion: "send the fetch through a Chain whose terminal it is, which places a pager above it")
        case .page(let fetch, let page): try await self.fetch(fetch, page: page, context: context)
        case .objectFault(let id): try await objectFault(id, context: context)
        case .revalidation(.objectFault(let id), let validators):
            try await objectFault(id, ifChangedSince: validators, context: context)
        case .revalidation(let request, _): try await respond(to: request, context: context)
        case .relationshipFault(let id, let name): try relationshipFault(id, name, context: context)
        case .relationshipPage(let id, let name, let page):
            try await relationshipPage(page, of: id, name, context: context)
        case .save(let changes): try await save(changes, context: context)
        case .changes(let request): try await changes(request, context: context)
        }
    }
}
