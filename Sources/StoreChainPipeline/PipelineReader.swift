import Foundation
import StoreChain
import StoreChainModelFile
import Yams

// Over 400 lines: one walk over a pipeline document, model to terminal, that gathers every
// problem with its place; its parts share the walk's state (problems, document, registry).

/// Walks a pipeline document: the model, the terminal and each handler, collecting every
/// problem with its place in the file.
struct PipelineReader {
    let document: YAMLDocument
    let registry: HandlerRegistry
    let directory: URL
    let session: DecodingSession
    let validatesOnly: Bool
    private(set) var problems: [StoreChainError] = []

    init(
        document: YAMLDocument, registry: HandlerRegistry, directory: URL, environment: [String: String],
        validatesOnly: Bool
    ) {
        self.document = document
        self.registry = registry
        self.directory = directory
        self.validatesOnly = validatesOnly
        self.session = DecodingSession(document: document, environment: environment)
    }

    private mutating func report(_ node: Yams.Node?, _ path: String, _ message: String, _ suggestion: String? = nil) {
        problems.append(
            StoreChainError(.invalidPipeline, message, at: document.location(node, path), suggestion: suggestion))
    }

    /// Adds the node's place to an error that does not say where it is.
    private mutating func add(_ error: any Error, at node: Yams.Node?, _ path: String) {
        switch error {
        case let error as StoreChainError:
            problems.append(locate(error, under: node, path))
        case let failure as ValidationFailure:
            problems += failure.errors.map { locate($0, under: node, path) }
        default:
            problems.append(StoreChainError(.invalidPipeline, "\(error)", at: document.location(node, path)))
        }
    }

    /// An error without a line, placed at the key its path names under `node`
    /// (`entities.Band.attributes.nam` under a terminal's options), or else at `node`.
    private func locate(_ error: StoreChainError, under node: Yams.Node?, _ path: String) -> StoreChainError {
        guard error.location?.line == nil else { return error }
        if let node, let relative = error.location?.path, let found = document.node(at: relative, under: node) {
            var located = error
            located.location = document.location(found, document.join(path, relative))
            return located
        }
        return error.located(document.location(node, path))
    }

    /// The files this one extends, nearest first; a loop is an error.
    var extendedBy: [URL] = []

    /// The top-level pairs, checked once for unknown keys.
    private var topPairs: [(key: String, keyNode: Yams.Node, value: Yams.Node)]?
    /// The reader of the extended file, once opened: empty when there is none or it failed (an
    /// array, as a struct cannot hold itself).
    private var extended: [PipelineReader]?
    /// How many of the extended reader's problems are already in `problems`.
    private var adopted = 0

    mutating func read() -> Pipeline? {
        // Without a model, the rest is still read for the problems it can show (unknown types).
        let model = readModel()
        let terminal = readTerminal(model: model)
        let stages = readHandlers(model: model)
        let tracing = readTracing()
        guard let model, let terminal, let stages, let tracing else { return nil }
        return Pipeline(
            source: document.source ?? "pipeline", model: model, stages: stages, terminalType: terminal.type,
            terminal: terminal.responder, tracing: tracing)
    }

    private mutating func top() -> [(key: String, keyNode: Yams.Node, value: Yams.Node)]? {
        if let topPairs { return topPairs }
        guard let root = document.root, case .mapping = root else {
            report(
                document.root, "", "the pipeline file is empty or not a mapping",
                "start with 'model:', 'handlers:' and 'terminal:', or 'extends:' another file")
            topPairs = []
            return nil
        }
        let pairs = document.pairs(root, "", problems: &problems) ?? []
        let allowed = ["extends", "model", "handlers", "terminal", "tracing"]
        for pair in pairs where !allowed.contains(pair.key) {
            report(pair.keyNode, pair.key, "unknown key '\(pair.key)'", Suggestion.didYouMean(pair.key, in: allowed))
        }
        topPairs = pairs
        return pairs
    }

    private mutating func value(of key: String) -> Yams.Node? {
        top()?.first { $0.key == key }?.value
    }

    /// Runs `body` on the reader of the file `extends:` names and takes its new problems; nil
    /// when the file extends none or the other cannot be read (a problem says why).
    private mutating func withBase<T>(_ body: (inout PipelineReader) -> T) -> T? {
        if extended == nil { extended = openBase().map { [$0] } ?? [] }
        guard var reader = extended?.first else { return nil }
        let result = body(&reader)
        let node = value(of: "extends")
        let line = node?.mark.map { ":\($0.line)" } ?? ""
        let here = document.source ?? "the pipeline"
        problems += reader.problems.dropFirst(adopted).map { problem in
            var problem = problem
            problem.message += " (in \(reader.document.source ?? "the extended file"), which \(here)\(line) extends)"
            return problem
        }
        adopted = reader.problems.count
        extended = [reader]
        return result
    }

    private mutating func openBase() -> PipelineReader? {
        guard let node = value(of: "extends") else { return nil }
        let path: String
        do {
            path = try NodeDecoder(node: node, path: "extends", session: session).decode(String.self)
        } catch {
            add(error, at: node, "extends")
            return nil
        }
        let url = (path.hasPrefix("/") ? URL(filePath: path) : directory.appending(path: path)).standardizedFileURL
        let here = document.source.map { directory.appending(path: URL(filePath: $0).lastPathComponent) }
        let chain = ([here].compactMap { $0 } + extendedBy).map(\.standardizedFileURL)
        guard !chain.contains(url) else {
            let loop = (chain.reversed() + [url]).map(\.lastPathComponent).joined(separator: " → ")
            report(node, "extends", "'\(path)' extends this file again (\(loop))", "remove one of the 'extends:'")
            return nil
        }
        // Named as this file is named (relative to the same folder), so errors read alike.
        let source = document.source.map {
            URL(filePath: $0).deletingLastPathComponent().appending(path: path).relativePath
        }
        let text: String
        do {
            text = try YAMLDocument.text(at: url, what: "the extended pipeline file")
        } catch {
            report(
                node, "extends", "the extended pipeline file '\(path)' cannot be read (looked for \(url.path))",
                "paths in 'extends' are relative to this file's folder")
            return nil
        }
        let baseDocument: YAMLDocument
        do {
            baseDocument = try YAMLDocument(text: text, source: source ?? path)
        } catch {
            var error = error
            error.message += " (in \(source ?? path), which \(document.source ?? "the pipeline") extends)"
            problems.append(error)
            return nil
        }
        var reader = PipelineReader(
            document: baseDocument, registry: registry, directory: url.deletingLastPathComponent(),
            environment: session.environment, validatesOnly: validatesOnly)
        reader.extendedBy = chain
        return reader
    }

    private mutating func readModel() -> ObjectModel? {
        if let node = value(of: "model") { return readModel(node) }
        if value(of: "extends") != nil { return withBase { $0.readModel() } ?? nil }
        report(document.root, "model", "the pipeline names no model file", "add 'model: music.model.yml'")
        return nil
    }

    /// The `tracing:` options of this file, or of the file it extends when it gives none; nil
    /// when they are wrong (a problem says why).
    private mutating func readTracing() -> TracingOptions? {
        guard let node = value(of: "tracing") else {
            // No base, or one that cannot be read (a problem says why): the defaults.
            guard value(of: "extends") != nil, let base = withBase({ $0.readTracing() }) else {
                return TracingOptions()
            }
            return base
        }
        do {
            let options = try NodeDecoder(node: node, path: "tracing", session: session).decode(TracingOptions.self)
            let unknown = session.unknownKeys(under: "tracing")
            problems += unknown
            return unknown.isEmpty ? options : nil
        } catch {
            add(error, at: node, "tracing")
            return nil
        }
    }

    /// The terminal of this file, or of the file it extends (built with this file's model).
    private mutating func readTerminal(model: ObjectModel?)
        -> (type: String, responder: any StoreResponder)?
    {
        if value(of: "terminal") == nil, value(of: "extends") != nil {
            let terminal = withBase { $0.readTerminal(model: model) } ?? nil
            cacheNamespace = terminal?.responder.cacheNamespace
            return terminal
        }
        return readTerminal(value(of: "terminal"), root: document.root, model: model)
    }

    /// The handlers of this file, or of the file it extends when it lists none.
    private mutating func readHandlers(model: ObjectModel?) -> [Pipeline.Stage]? {
        guard let handlers = value(of: "handlers") else {
            guard value(of: "extends") != nil else { return [] }
            return withBase { [cacheNamespace] reader in
                reader.cacheNamespace = cacheNamespace
                return reader.readHandlers(model: model)
            } ?? nil
        }
        var stages: [Pipeline.Stage] = []
        if case .sequence(let items) = handlers {
            for (index, item) in items.enumerated() {
                if let stage = readHandler(item, path: "handlers[\(index)]", model: model) { stages.append(stage) }
            }
        } else {
            report(handlers, "handlers", "'handlers' must be a list", "write one '- type: { options }' per line")
        }
        checkOrder(stages)
        return stages
    }

    /// What the terminal's data comes from, once it is read.
    private(set) var cacheNamespace: String?

    private var context: (ObjectModel) -> HandlerRegistry.Context {
        { [directory, session, validatesOnly, cacheNamespace, registry] model in
            HandlerRegistry.Context(
                model: model, directory: directory, environment: session.environment, validatesOnly: validatesOnly,
                cacheNamespace: cacheNamespace, interceptors: registry.interceptors, location: nil)
        }
    }

    private mutating func readModel(_ node: Yams.Node) -> ObjectModel? {
        let decoder = NodeDecoder(node: node, path: "model", session: session)
        do {
            let path = try decoder.decode(String.self)
            let url = path.hasPrefix("/") ? URL(filePath: path) : directory.appending(path: path)
            guard FileManager.default.fileExists(atPath: url.path) else {
                report(
                    node, "model", "the model file '\(path)' does not exist (looked for \(url.path))",
                    "model paths are relative to the pipeline file's folder")
                return nil
            }
            return try ModelFile.load(contentsOf: url)
        } catch {
            add(error, at: node, "model")
            return nil
        }
    }

    private mutating func readTerminal(_ node: Yams.Node?, root: Yams.Node?, model: ObjectModel?)
        -> (type: String, responder: any StoreResponder)?
    {
        let types = registry.terminalTypes
        guard let node else {
            report(
                root, "terminal", "the pipeline has no terminal",
                "add 'terminal:' with one of \(types.joined(separator: ", "))")
            return nil
        }
        let pairs = document.pairs(node, "terminal", problems: &problems) ?? []
        guard pairs.count == 1, let pair = pairs.first else {
            report(node, "terminal", "'terminal' takes exactly one of \(types.joined(separator: ", "))", "keep one")
            return nil
        }
        let path = "terminal.\(pair.key)"
        guard let entry = registry.terminals[pair.key] else {
            report(
                pair.keyNode, path, "unknown terminal type '\(pair.key)'", Suggestion.didYouMean(pair.key, in: types))
            return nil
        }
        guard let model else { return nil }
        do {
            let responder = try entry.make(NodeDecoder(node: pair.value, path: path, session: session), context(model))
            cacheNamespace = responder.cacheNamespace
            problems += session.unknownKeys(under: path)
            return (pair.key, responder)
        } catch {
            // Options after the failing one were never asked for, so unknown keys are not
            // reported here: they would be guesses.
            add(error, at: pair.value, path)
            return nil
        }
    }

    /// The scope of a handler: `when: { kinds: [fetch, object-fault], entities: [Track] }`.
    private struct Scope: Decodable {
        var kinds: [String]?
        var entities: [String]?
    }

    private mutating func readHandler(_ item: Yams.Node, path: String, model: ObjectModel?) -> Pipeline.Stage? {
        var typeName: String?
        var typeNode: Yams.Node?
        var options = Yams.Node.mapping(Yams.Node.Mapping([]))
        var scopeNode: Yams.Node?
        switch item {
        case .scalar(let scalar):
            typeName = scalar.string
            typeNode = item
        case .mapping:
            for pair in document.pairs(item, path, problems: &problems) ?? [] {
                if pair.key == "when" {
                    scopeNode = pair.value
                } else if typeName == nil {
                    (typeName, typeNode, options) = (pair.key, pair.keyNode, pair.value)
                } else {
                    report(
                        pair.keyNode, "\(path).\(pair.key)",
                        "one list item holds one handler; '\(pair.key)' is a second",
                        "start '\(pair.key)' on its own line with '- '")
                }
            }
        default:
            report(item, path, "expected a handler such as '- memory-cache: { ttl: 5m }'")
        }
        guard let typeName else { return nil }
        let stagePath = "\(path).\(typeName)"
        guard let entry = registry.handlers[typeName] else {
            report(
                typeNode, stagePath, "unknown handler type '\(typeName)'",
                Suggestion.didYouMean(typeName, in: registry.handlerTypes)
                    + " (registered: \(registry.handlerTypes.joined(separator: ", "))); a type of the app's own is "
                    + "registered in the HandlerRegistry given to Pipeline.load (the storechain commands: --ignore-type \(typeName))"
            )
            return nil
        }
        if case .scalar(let scalar) = options, scalar.string.isEmpty || scalar.string == "null" {
            options = .mapping(Yams.Node.Mapping([]))
        }
        guard let model else { return nil }
        var handler: any StoreHandler
        do {
            var handlerContext = context(model)
            handlerContext.location = StoreChainError.Location(file: document.source, line: typeNode?.mark?.line)
            handler = try entry.make(NodeDecoder(node: options, path: stagePath, session: session), handlerContext)
        } catch {
            add(error, at: options, stagePath)
            return nil
        }
        problems += session.unknownKeys(under: stagePath)
        if let scopeNode, let scope = readScope(scopeNode, path: "\(path).when", model: model) {
            handler = handler.when(kinds: scope.kinds, entities: scope.entities)
        }
        return Pipeline.Stage(type: typeName, handler: handler, line: typeNode?.mark?.line)
    }

    private mutating func readScope(_ node: Yams.Node, path: String, model: ObjectModel)
        -> (kinds: Set<StoreRequest.Kind>?, entities: Set<String>?)?
    {
        let scope: Scope
        do {
            scope = try NodeDecoder(node: node, path: path, session: session).decode(Scope.self)
        } catch {
            add(error, at: node, path)
            return nil
        }
        problems += session.unknownKeys(under: path)
        let names = Dictionary(uniqueKeysWithValues: StoreRequest.Kind.allCases.map { ($0.rawValue, $0) })
        var kinds: Set<StoreRequest.Kind>?
        for name in scope.kinds ?? [] {
            guard let kind = names[name] else {
                report(
                    node, "\(path).kinds", "unknown request kind '\(name)'",
                    Suggestion.didYouMean(name, in: names.keys.sorted()))
                return nil
            }
            kinds = (kinds ?? []).union([kind])
        }
        for name in scope.entities ?? [] where model.entity(named: name) == nil {
            report(
                node, "\(path).entities", "the model has no entity '\(name)'",
                Suggestion.didYouMean(name, in: model.entities.map(\.name)))
            return nil
        }
        return (kinds, scope.entities.map(Set.init))
    }

    /// The change feed above the caches, the caches above the outbox, the outbox above pagination, pagination above batching, batching
    /// above rate limiting and retries.
    private mutating func checkOrder(_ stages: [Pipeline.Stage]) {
        var deepest: (stage: Pipeline.Stage, placement: HandlerRegistry.Placement)?
        for stage in stages {
            guard let placement = registry.placement(of: stage.type), placement != .anywhere else { continue }
            if let above = deepest, placement < above.placement {
                problems.append(
                    StoreChainError(
                        .invalidPipeline,
                        "'\(stage.type)' is below '\(above.stage.type)'\(above.stage.line.map { " (line \($0))" } ?? ""), where it cannot work: "
                            + Self.reason(placement),
                        at: .init(file: document.source, line: stage.line, path: "handlers.\(stage.type)"),
                        suggestion: "move '\(stage.type)' above '\(above.stage.type)'"))
            } else {
                deepest = (stage, placement)
            }
        }
    }

    private static func reason(_ placement: HandlerRegistry.Placement) -> String {
        switch placement {
        case .feed:
            "reads must wait for it after a restart until it knows what changed meanwhile, and it must see what the caches answer"
        case .cache:
            "a cache below pagination or traffic handlers sees single pages and batches, not the app's requests"
        case .outbox:
            "the caches above it must hold what it acknowledges and see its replays, and its saves must pass the traffic handlers"
        case .pagination: "pages must each pass rate limiting and retries below the pager"
        case .batching: "faults paced one by one by rate limiting cannot be merged into batches"
        case .traffic, .anywhere: "it must be below the caches, the pager and batching"
        }
    }
}
