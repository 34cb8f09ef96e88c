import Foundation

/// Encoded as `{"entity": "Band", "key": {"integer": 42}}`, or with `"temporary": UUID` for an
/// inserted object that has no key yet.
extension ObjectID: Codable {
    private enum CodingKeys: String, CodingKey {
        case entity, key, temporary
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entity, forKey: .entity)
        switch reference {
        case .key(let key): try container.encode(key, forKey: .key)
        case .temporary(let uuid): try container.encode(uuid, forKey: .temporary)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let entity = try container.decode(String.self, forKey: .entity)
        if let uuid = try container.decodeIfPresent(UUID.self, forKey: .temporary) {
            self.init(entity: entity, reference: .temporary(uuid))
        } else {
            self.init(entity: entity, key: try container.decode(Value.self, forKey: .key))
        }
    }
}

/// Encoded as `{"one": ID-or-null}` or `{"many": [ID…]}`.
extension RelationshipValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case one, many
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .toOne(let target): try container.encode(target, forKey: .one)
        case .toMany(let targets): try container.encode(targets, forKey: .many)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.many) {
            self = .toMany(try container.decode([ObjectID].self, forKey: .many))
        } else if container.contains(.one) {
            self = .toOne(try container.decodeIfPresent(ObjectID.self, forKey: .one))
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a relationship needs 'one' or 'many'"))
        }
    }
}

/// A node's data: ID, attributes, relationships and version. Its freshness is not encoded (it
/// says how old the data is, and whoever reads the node back decides that anew).
extension Node: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, attributes, relationships, version
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(relationships, forKey: .relationships)
        try container.encodeIfPresent(version, forKey: .version)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(ObjectID.self, forKey: .id),
            attributes: try container.decode(AttributeValues.self, forKey: .attributes),
            relationships: try container.decode([String: RelationshipValue].self, forKey: .relationships),
            version: try container.decodeIfPresent(String.self, forKey: .version))
    }
}
