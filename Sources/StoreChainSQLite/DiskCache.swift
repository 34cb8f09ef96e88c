import Logging
import StoreChain

/// The disk cache: `CacheHandler` over a SQLite file, so cached data, expiry and validators
/// survive restarts.
///
/// ```swift
/// let chain = Chain(terminal: remote) {
///     MemoryCache(model: model)
///     DiskCache(model: model, path: "Caches/music.sqlite", namespace: remote.cacheNamespace)
/// }
/// ```
public typealias DiskCache = CacheHandler<SQLiteCacheStorage>

extension CacheHandler where Storage == SQLiteCacheStorage {
    /// A disk cache in the SQLite file at `path` (created owner-only, with its directory),
    /// holding at most `maxBytes` of payloads, compressed with zlib where that saves space
    /// unless `compresses` is false. `namespace` names what the data comes from (pass the
    /// terminal's `cacheNamespace`): a file that held another source's data starts empty.
    public convenience init(
        model: ObjectModel, path: String, namespace: String? = nil, maxBytes: Int = 200 << 20, compresses: Bool = true,
        options: CacheOptions = CacheOptions(),
        logger: Logger = Logger(label: "storechain.disk-cache")
    ) {
        self.init(
            model: model,
            file: DiskCacheFile(path: path, namespace: namespace, maxBytes: maxBytes, compresses: compresses),
            options: options, logger: logger)
    }

    /// A disk cache in `file`, as a pipeline file describes it.
    public convenience init(
        model: ObjectModel, file: DiskCacheFile, options: CacheOptions = CacheOptions(),
        logger: Logger = Logger(label: "storechain.disk-cache")
    ) {
        self.init(
            name: "disk-cache", model: model,
            storage: SQLiteCacheStorage(
                path: file.path, namespace: file.namespace, model: model, maxBytes: file.maxBytes,
                compresses: file.compresses, logger: logger), options: options)
    }
}
