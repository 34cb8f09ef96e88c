import Foundation

/// A store that loads records from a JSON file (`{"Band": [{…}], "Album": [{…}]}`) and answers
/// fetches over them with the reference evaluator.
///
/// ```swift
/// let store = try JSONFileStore(contentsOf: URL(filePath: "music.json"), model: model)
/// let bands = try store.fetch(FetchRequest(entity: "Band"))
/// ```
public final class JSONFileStore: Sendable {
    /// The file the records were read from.
    public let url: URL
    /// The records, held in memory.
    public let store: InMemoryStore

    /// Loads and checks the whole file.
    ///
    /// - Throws: `StoreChainError` naming the file, and the byte offset (malformed JSON) or
    ///   JSON path (a value that does not fit the model).
    public init(contentsOf url: URL, model: ObjectModel) throws(StoreChainError) {
        self.url = url
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StoreChainError(
                .unreadableFile, "cannot read the data file", at: .init(file: url.relativePath),
                suggestion: "check that the path is right and the file is readable", underlying: error)
        }
        let dataset = try RecordLoader(model: model, source: url.relativePath).load(json: data)
        store = InMemoryStore(model: model, dataset: dataset)
    }

    /// The model of the objects it holds.
    public var model: ObjectModel { store.model }

    /// Runs a fetch request over the file's records.
    public func fetch(_ request: FetchRequest) throws(StoreChainError) -> FetchResult {
        try store.fetch(request)
    }
}
