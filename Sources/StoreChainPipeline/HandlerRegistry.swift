import Foundation
import StoreChain
import StoreChainHTTP

/// Maps the handler and terminal type names a pipeline file uses to factories with typed,
/// `Decodable` options, the way Core Data registers store classes by a type string. A registry
/// is a value: start from `.standard`, register your own types, and pass it to
/// `Pipeline.load`; there is no global registry.
///
/// ```swift
/// var registry = HandlerRegistry.standard
/// registry.register("fixed-bands", options: FixedBandsOptions.self) { options, context in
///     FixedBandsHandler(names: options.names)
/// }
/// let pipeline = try Pipeline.load(contentsOf: url, registry: registry)
/// ```
public struct HandlerRegistry: Sendable {
    /// What a factory may use besides its options.
    public struct Context: Sendable {
        /// The pipeline's model.
        public let model: ObjectModel
        /// The folder of the pipeline file; relative paths in options are relative to it.
        public let directory: URL
        /// The environment `${NAME}` takes values from.
        public let environment: [String: String]
        /// Only checking the file (`storechain validate`): factories should not open files or
        /// connections, and may return a stand-in handler.
        public let validatesOnly: Bool
        /// What the terminal's data comes from (`StoreResponder.cacheNamespace`), for caches
        /// that outlive the process.
        public let cacheNamespace: String?
        /// The registered HTTP interceptor types, for terminals that read an `interceptors` list.
        let interceptors: [String: InterceptorEntry]
        /// Where the handler being made is written (the pipeline file and the line of its type),
        /// for messages its handler logs later.
        public internal(set) var location: StoreChainError.Location?

        /// A path from an option: relative paths are taken from the pipeline file's folder, `~/…`
        /// from the home folder.
        public func url(forPath path: String) -> URL {
            if path.hasPrefix("/") { return URL(filePath: path) }
            if path.hasPrefix("~/") { return homeDirectory.appending(path: String(path.dropFirst(2))) }
            return directory.appending(path: path)
        }

        /// Where a cache file goes: an absolute path as written; `./…` or `../…` next to the
        /// pipeline file; `~/…` in the home folder; any other relative path in the user's cache
        /// folder (`cacheDirectory`), so caches stay out of source trees.
        public func cacheURL(forPath path: String) -> URL {
            if path.hasPrefix("/") { return URL(filePath: path) }
            if path.hasPrefix("./") || path.hasPrefix("../") {
                return directory.appending(path: path).standardizedFileURL
            }
            if path.hasPrefix("~/") { return homeDirectory.appending(path: String(path.dropFirst(2))) }
            return cacheDirectory.appending(path: path)
        }

        /// The folder for cache files: `STORECHAIN_CACHE_DIR` when set; else
        /// `$XDG_CACHE_HOME/storechain` or `~/.cache/storechain` on Linux, and
        /// `~/Library/Caches/storechain` on Apple platforms.
        public var cacheDirectory: URL {
            if let folder = environment["STORECHAIN_CACHE_DIR"], !folder.isEmpty { return URL(filePath: folder) }
            #if canImport(Darwin)
                return homeDirectory.appending(path: "Library/Caches/storechain")
            #else
                if let folder = environment["XDG_CACHE_HOME"], folder.hasPrefix("/") {
                    return URL(filePath: folder).appending(path: "storechain")
                }
                return homeDirectory.appending(path: ".cache/storechain")
            #endif
        }

        private var homeDirectory: URL {
            if let home = environment["HOME"], home.hasPrefix("/") { return URL(filePath: home) }
            return FileManager.default.homeDirectoryForCurrentUser
        }
    }

    /// Where a handler must sit in a chain, so an order that cannot work is caught early.
    public enum Placement: Int, Sendable, Comparable {
        /// Anywhere (logging, metrics, most custom handlers).
        case anywhere = 0
        /// Above the caches: after a restart, reads wait there until the change feed has told
        /// what changed while the process was stopped, and what the caches answer is recorded.
        case feed = 1
        /// Above pagination and traffic handlers: a cache below a pager would see single pages.
        case cache = 2
        /// Below the caches, so they hold its optimistic answers and see its replays; above
        /// pagination, batching and traffic handlers, so its saves pass them like any other.
        case outbox = 3
        /// Below the caches, above rate limiting and retries, so each page is limited and retried.
        case pagination = 4
        /// Above rate limiting and retries: faults paced one by one cannot be merged.
        case batching = 5
        /// Below caches, pagination and batching (rate limit, retry).
        case traffic = 6

        public static func < (left: Placement, right: Placement) -> Bool { left.rawValue < right.rawValue }
    }

    struct HandlerEntry: Sendable {
        let placement: Placement
        let make: @Sendable (NodeDecoder, Context) throws -> any StoreHandler
    }

    struct TerminalEntry: Sendable {
        let make: @Sendable (NodeDecoder, Context) throws -> any StoreResponder
    }

    struct InterceptorEntry: Sendable {
        let make: @Sendable (NodeDecoder, Context) throws -> any HTTPInterceptor
    }

    private(set) var handlers: [String: HandlerEntry] = [:]
    private(set) var terminals: [String: TerminalEntry] = [:]
    private(set) var interceptors: [String: InterceptorEntry] = [:]

    /// An empty registry; `.standard` has the built-in types.
    public init() {}

    /// Registers a handler type: its options are decoded from the file and given to `make`.
    public mutating func register<Options: Decodable & Sendable>(
        _ type: String, options: Options.Type, placement: Placement = .anywhere,
        make: @escaping @Sendable (Options, Context) throws -> any StoreHandler
    ) {
        handlers[type] = HandlerEntry(placement: placement) { decoder, context in
            try make(try decoder.decode(Options.self), context)
        }
    }

    /// Registers a terminal type.
    public mutating func registerTerminal<Options: Decodable & Sendable>(
        _ type: String, options: Options.Type, make: @escaping @Sendable (Options, Context) throws -> any StoreResponder
    ) {
        terminals[type] = TerminalEntry { decoder, context in try make(try decoder.decode(Options.self), context) }
    }

    /// A terminal type that reads its options node itself (the remote terminal, for its
    /// `interceptors` list).
    mutating func registerTerminal(
        _ type: String, make: @escaping @Sendable (NodeDecoder, Context) throws -> any StoreResponder
    ) {
        terminals[type] = TerminalEntry(make: make)
    }

    /// Registers an HTTP interceptor type for the remote terminal's `interceptors` list:
    /// `- type: { options }` there decodes `Options` and calls `make`.
    public mutating func registerInterceptor<Options: Decodable & Sendable>(
        _ type: String, options: Options.Type,
        make: @escaping @Sendable (Options, Context) throws -> any HTTPInterceptor
    ) {
        interceptors[type] = InterceptorEntry { decoder, context in
            try make(try decoder.decode(Options.self), context)
        }
    }

    /// The HTTP interceptor type names, sorted.
    public var interceptorTypes: [String] { interceptors.keys.sorted() }

    /// The handler type names, sorted.
    public var handlerTypes: [String] { handlers.keys.sorted() }
    /// The terminal type names, sorted.
    public var terminalTypes: [String] { terminals.keys.sorted() }

    /// Where a handler type must sit, when it is registered.
    public func placement(of type: String) -> Placement? { handlers[type]?.placement }
}
