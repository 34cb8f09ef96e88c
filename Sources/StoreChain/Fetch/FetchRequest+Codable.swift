/// A fetch request encodes what it asks, not how it may be cached: the predicate in its
/// canonical text form, sort descriptors as `-key[c]`, and the result type. The cache policy
/// is not encoded and decodes as `.useCache`.
extension FetchRequest: Codable {
    private enum CodingKeys: String, CodingKey {
        case entity, predicate, sort, limit, offset, result, prefetch
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entity, forKey: .entity)
        try container.encodeIfPresent(predicate?.format, forKey: .predicate)
        try container.encode(sortDescriptors.map(\.description), forKey: .sort)
        try container.encodeIfPresent(fetchLimit, forKey: .limit)
        try container.encode(fetchOffset, forKey: .offset)
        switch resultType {
        case .objects: try container.encode(["objects"], forKey: .result)
        case .objectIDs: try container.encode(["ids"], forKey: .result)
        case .count: try container.encode(["count"], forKey: .result)
        case .dictionaries(let properties): try container.encode(["dictionaries"] + properties, forKey: .result)
        }
        try container.encode(relationshipKeyPathsForPrefetching, forKey: .prefetch)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let entity = try container.decode(String.self, forKey: .entity)
        var predicate: FetchPredicate?
        if let text = try container.decodeIfPresent(String.self, forKey: .predicate) {
            do {
                predicate = try FetchPredicate(format: text)
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: .predicate, in: container, debugDescription: error.description)
            }
        }
        var sort: [FetchSortDescriptor] = []
        for text in try container.decode([String].self, forKey: .sort) {
            do {
                sort.append(try FetchSortDescriptor(parsing: text))
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: .sort, in: container, debugDescription: error.description)
            }
        }
        let result = try container.decode([String].self, forKey: .result)
        let resultType: ResultType
        switch result.first {
        case "objects": resultType = .objects
        case "ids": resultType = .objectIDs
        case "count": resultType = .count
        case "dictionaries": resultType = .dictionaries(Array(result.dropFirst()))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .result, in: container, debugDescription: "unknown result type \(result)")
        }
        self.init(
            entity: entity, predicate: predicate, sortDescriptors: sort,
            fetchLimit: try container.decodeIfPresent(Int.self, forKey: .limit),
            fetchOffset: try container.decode(Int.self, forKey: .offset), resultType: resultType,
            relationshipKeyPathsForPrefetching: try container.decode([String].self, forKey: .prefetch))
    }
}
