import StoreChain

/// Where a disk cache keeps its data and how: the file, the source it holds data for, its size
/// limit and whether payloads are compressed.
///
/// Pipeline files write it among the cache's options: `disk-cache: { path: cache/music.sqlite,
/// namespace: music-v2, max-size: 200MB, compress: true, ttl: 1h }`.
public struct DiskCacheFile: Sendable, Hashable, Decodable {
    /// The SQLite file (created owner-only, with its directory).
    public var path: String
    /// What the data comes from; a file that held another source's data starts empty. `nil`
    /// takes the terminal's `cacheNamespace` in a pipeline file.
    public var namespace: String?
    /// The most bytes of payloads the file holds.
    public var maxBytes: Int
    /// Whether payloads are compressed with zlib where that saves space.
    public var compresses: Bool

    /// A disk cache at `path`, of at most `maxBytes` bytes of payloads (200 MiB by default).
    public init(path: String, namespace: String? = nil, maxBytes: Int = 200 << 20, compresses: Bool = true) {
        self.path = path
        self.namespace = namespace
        self.maxBytes = maxBytes
        self.compresses = compresses
    }

    private enum CodingKeys: String, CodingKey {
        case path, namespace
        case maxBytes = "maxSize"
        case compresses = "compress"
    }

    /// Reads `path` (required), `namespace`, `max-size` and `compress`; a key left out keeps the
    /// default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = DiskCacheFile(path: try container.decode(String.self, forKey: .path))
        self.init(
            path: defaults.path,
            namespace: try container.decodeIfPresent(String.self, forKey: .namespace) ?? defaults.namespace,
            maxBytes: try container.decodeIfPresent(ByteSize.self, forKey: .maxBytes)?.bytes ?? defaults.maxBytes,
            compresses: try container.decodeIfPresent(Bool.self, forKey: .compresses) ?? defaults.compresses)
    }
}
