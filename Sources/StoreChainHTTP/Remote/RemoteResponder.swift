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
public final class RemoteResponder: UpstreamCounting {
    public let name = "remote"
    public let model: Model
    public let options: RemoteOptions
    /// The backend's address and a digest of the address and the entity mapping: a disk cache
    /// keeps data from another backend, or mapped another way, apart. Headers and tokens are
    /// not part of it, so a refreshed token keeps the cache.
    public let cacheNamespace: String?
    let transport: any HTTPTransport
    /// What every HTTP exchange passes through, outermost first.
    public let interceptors: [any HTTPInterceptor]
    let mapper: RecordMapper
    let planners: [String: QueryPlanner]
    private let authorization: String?
    private let counters = Locked(Traffic())
    /// The sizes of the listings read so far, for choosing how to load related objects.
    let listingSizes = ListingSizes()

    /// Requests and bytes exchanged so far.
    public typealias Traffic = UpstreamTraffic

    /// Checks the options against the model (every entity, attribute, relationship and
    /// template), and reads the bearer token from the environment. Every HTTP exchange passes
    /// through `interceptors`, the first outermost.
    public init(
        model: Model, options: RemoteOptions, transport: any HTTPTransport = AsyncHTTPClientTransport(),
        interceptors: [any HTTPInterceptor] = [], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StoreChainError) {
        self.model = model
        self.options = options
        self.cacheNamespace =
            "remote \(RemoteError.redacted(options.baseURL)) #\(Fingerprint.hex(of: (options.baseURL, options.entities)))"
        self.transport = transport
        self.interceptors = interceptors
        self.mapper = RecordMapper(model: model, entities: options.entities)
        if let problem = Self.problems(in: options, model: model).first { throw problem }
        var planners: [String: QueryPlanner] = [:]
        for (name, entityOptions) in options.entities {
            planners[name] = try QueryPlanner(entity: try model.requireEntity(name), options: entityOptions)
        }
        self.planners = planners
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
    }

    /// Every problem of the mapping against the model — entities, attributes, relationships,
    /// templates and bindings — each with its key path under the options
    /// (`entities.Band.attributes.nam`), so all of them can be reported at once.
    public static func problems(in options: RemoteOptions, model: Model) -> [StoreChainError] {
        var problems: [StoreChainError] = []
        for name in options.entities.keys.sorted() {
            guard let entityOptions = options.entities[name] else { continue }
            let found = mappingProblems(entityOptions, named: name, model: model)
            problems += found
            guard found.isEmpty, let entity = model.entity(named: name) else { continue }
            do throws(StoreChainError) {
                _ = try QueryPlanner(entity: entity, options: entityOptions)
            } catch {
                problems.append(error.located(.init(path: "entities.\(name)")))
            }
        }
        if let changes = options.changes { problems += changesProblems(changes, model: model) }
        return problems
    }

    private static func changesProblems(_ changes: RemoteChangesOptions, model: Model) -> [StoreChainError] {
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

    private static func mappingProblems(_ options: RemoteEntityOptions, named name: String, model: Model)
        -> [StoreChainError]
    {
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
        return problems
    }

    /// Requests and bytes exchanged so far.
    public var traffic: Traffic {
        counters.withLock { $0 }
    }

    func planner(for entity: String) throws(StoreChainError) -> QueryPlanner {
        guard let planner = planners[entity] else {
            throw StoreChainError(
                .noEndpoint, "the backend has no mapping for entity '\(entity)'",
                suggestion: "add '\(entity)' to the remote options' entities")
        }
        return planner
    }

    /// Runs off the caller's executor (`@concurrent`): building requests, parsing and mapping
    /// JSON and following pages must not run on the main actor of an app that fetches from it.
    @concurrent
    public func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        if context.effectiveCachePolicy(for: request) == .cacheOnly, request.kind != .save {
            throw StoreChainError(
                .notCached, "\(request) is not cached, and the cache-only policy forbids asking the backend",
                suggestion: "fetch it once while the backend is reachable, or use another cache policy")
        }
        return switch request {
        case .fetch(let fetch): try await self.fetch(fetch, page: nil, context: context)
        case .page(let fetch, let page): try await self.fetch(fetch, page: page, context: context)
        case .revalidation(.fetch(let fetch), let validators):
            try await self.fetch(fetch, page: nil, ifChangedSince: validators, context: context)
        case .objectFault(let id): try await objectFault(id, context: context)
        case .revalidation(.objectFault(let id), let validators):
            try await objectFault(id, ifChangedSince: validators, context: context)
        case .revalidation(let request, _): try await respond(to: request, context: context)
        case .relationshipFault(let id, let name): try await relationshipFault(id, name, context: context)
        case .relationshipPage(let id, let name, let page):
            try await relationshipPage(page, of: id, name, context: context)
        case .save(let changes): try await save(changes, context: context)
        case .changes(let request): try await changes(request, context: context)
        }
    }

    /// One exchange with the backend: counted, conditional when given `validators`, and error
    /// statuses turned into errors (except those the caller accepts). Retrying is
    /// `RetryHandler`'s job, above; remembering answers is the caches'.
    func send(
        _ method: String, _ url: URL, body: JSONValue? = nil, ifChangedSince validators: Validators? = nil,
        idempotencyKey: String? = nil, ifMatch: String? = nil, longPoll: Duration? = nil,
        eventStream: EventStreamRead? = nil, lastEventID: String? = nil, context: RequestContext,
        accepting: Set<Int> = []
    ) async throws -> TransportResponse {
        try context.checkDeadline()
        var headers = options.headers
        if eventStream != nil {
            headers["Accept"] = "text/event-stream"
            headers["Cache-Control"] = "no-cache"
            if let lastEventID { headers["Last-Event-ID"] = lastEventID }
        } else {
            headers["Accept"] = "application/json"
        }
        if let authorization { headers["Authorization"] = authorization }
        if let idempotencyKey { headers["Idempotency-Key"] = idempotencyKey }
        if let ifMatch { headers["If-Match"] = ifMatch }
        if let validators {
            if let etag = validators.etag { headers["If-None-Match"] = etag }
            if let lastModified = validators.lastModified { headers["If-Modified-Since"] = lastModified }
        }
        var data: Data?
        if let body {
            data = Data(body.description.utf8)
            headers["Content-Type"] = "application/json"
        }
        // A long poll may be held open for its wait before the backend starts to answer.
        var timeout = Duration.seconds(options.timeoutSeconds) + (longPoll ?? .zero)
        if let deadline = context.deadline {
            timeout = min(timeout, .seconds(max(0, deadline.timeIntervalSince(context.clock.now))))
        }
        let request = TransportRequest(
            method: method, url: url, headers: headers, body: data, timeout: timeout, eventStream: eventStream)
        let requestedAt = context.clock.now
        var response = try await send(request, from: interceptors[...], context: context)
        response.requestedAt = requestedAt
        response.receivedAt = context.clock.now
        guard (200..<300).contains(response.status) || response.status == 304 || accepting.contains(response.status)
        else { throw RemoteError.status(request, response) }
        return response
    }

    /// Sends a request through the interceptors left, then the transport.
    private func send(
        _ request: TransportRequest, from interceptors: ArraySlice<any HTTPInterceptor>, context: RequestContext
    ) async throws -> TransportResponse {
        guard let interceptor = interceptors.first else {
            // An exchange counts when it is attempted, so one that fails (a dropped
            // connection) shows in the traffic too.
            counters.withLock { traffic in
                traffic.requests += 1
                traffic.bytesSent += request.body?.count ?? 0
            }
            context[StoreMetricsKey.self]?.count("upstream_requests_total", ["method": request.method])
            guard let tracer = context.tracer else { return try await exchange(request) }
            return try await HTTPClientSpan.run(request, tracer: tracer) { try await exchange($0) }
        }
        return try await interceptor.intercept(request, context: context) { request in
            try await send(request, from: interceptors.dropFirst(), context: context)
        }
    }

    /// Sends a request through the transport, counting the bytes received.
    private func exchange(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await transport.send(request)
        counters.withLock { $0.bytesReceived += response.body.count }
        return response
    }

    /// Parses a response body; malformed JSON names the URL and byte offset.
    func json(_ response: TransportResponse, from url: URL) throws(StoreChainError) -> JSONValue {
        if response.body.isEmpty { return .null }
        return try JSONParser().parse(response.body, source: RemoteError.redacted(url))
    }
}
