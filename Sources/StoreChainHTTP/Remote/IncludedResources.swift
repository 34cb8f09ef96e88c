import StoreChain

/// Related records a backend sends beside the primary ones, as JSON:API's compound documents
/// do (`include=album` → `included: [{ type: "albums", id: "2", attributes: … }]`): each becomes
/// an object of the entity its type names, mapped as that entity's records are, so a key path
/// through it (`album.title`) needs no request of its own.
public struct IncludedResources: Sendable, Hashable, Decodable {
    /// Where the included records are in a response body (`included`).
    public var path: String
    /// The field of each record naming its type (`type`).
    public var type: String
    /// Each type the backend names → the entity its records are (`albums` → `Album`); records of
    /// other types are left out.
    public var types: [String: String]

    /// Records at `path`, each of the entity `types` names for its `type` field.
    public init(path: String = "included", type: String = "type", types: [String: String]) {
        self.path = path
        self.type = type
        self.types = types
    }

    private enum Keys: String, CodingKey {
        case path, type, types
    }

    /// `{ types: { albums: Album, artists: Artist } }`, with `path` and `type` where they differ.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            path: try container.decodeIfPresent(String.self, forKey: .path) ?? "included",
            type: try container.decodeIfPresent(String.self, forKey: .type) ?? "type",
            types: try container.decode([String: String].self, forKey: .types))
    }
}

extension RecordMapper {
    /// The included records of a response body as nodes (with what they embed), each named by
    /// its JSON path.
    func includedNodes(in body: JSONValue, source: String) throws(StoreChainError) -> [Node] {
        guard let included, case .array(let records)? = JSONPath.value(at: included.path, in: body) else { return [] }
        var nodes: [Node] = []
        for (index, record) in records.enumerated() {
            guard case .string(let type)? = JSONPath.value(at: included.type, in: record),
                let name = included.types[type], let entity = model.entity(named: name)
            else { continue }
            let (node, embedded) = try node(
                from: record, entity: entity, jsonPath: "$.\(included.path)[\(index)]", source: source)
            nodes.append(node)
            nodes += embedded
        }
        return nodes
    }
}
