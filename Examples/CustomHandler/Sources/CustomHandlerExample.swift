import Foundation
import StoreChain
import StoreChainPipeline

/// The example's chain: the custom handler in front of the JSON-file store.
public enum CustomHandlerExample {
    /// Builds the chain over the music example files in `directory` (`Examples/Music`).
    public static func makeChain(musicDirectory directory: URL) throws -> (Chain, ObjectModel) {
        let model = try ModelFile.load(contentsOf: directory.appending(path: "music.model.yml"))
        let store = try JSONFileStore(contentsOf: directory.appending(path: "music.json"), model: model)
        let bundled = [
            Node(
                id: ObjectID(entity: "Band", key: 1),
                attributes: ["id": 1, "name": "Rue Royale", "country": "UK"],
                relationships: ["albums": .toMany([])])
        ]
        let chain = Chain(terminal: store.store) {
            FixedBandsHandler(model: model, bands: bundled)
        }
        return (chain, model)
    }
}
