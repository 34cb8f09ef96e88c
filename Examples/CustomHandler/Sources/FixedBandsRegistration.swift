import Foundation
import StoreChain
import StoreChainPipeline

/// `fixed-bands: { bands: [{ id: 1, name: Rue Royale, country: UK }] }` in a pipeline file.
public struct FixedBandsOptions: Decodable, Sendable {
    public struct Band: Decodable, Sendable {
        public var id: Int
        public var name: String
        public var country: String?
    }

    public var bands: [Band]

    /// The bands as nodes of the model's `Band` entity.
    public var nodes: [Node] {
        bands.map { band in
            var attributes: AttributeValues = ["id": .integer(band.id), "name": .string(band.name)]
            if let country = band.country { attributes["country"] = .string(country) }
            return Node(
                id: ObjectID(entity: "Band", key: .integer(band.id)), attributes: attributes,
                relationships: ["albums": .toMany([])])
        }
    }
}

extension CustomHandlerExample {
    /// The standard registry plus the `fixed-bands` handler type.
    public static var registry: HandlerRegistry {
        var registry = HandlerRegistry.standard
        registry.register("fixed-bands", options: FixedBandsOptions.self) { options, context in
            FixedBandsHandler(model: context.model, bands: options.nodes)
        }
        return registry
    }

    /// The example's pipeline file, read with the `fixed-bands` type registered.
    public static func loadPipeline(_ url: URL) throws(ValidationFailure) -> Pipeline {
        try Pipeline.load(contentsOf: url, registry: registry)
    }
}
