@_spi(Internals) import StoreChain
import StoreChainTesting

extension FuzzTarget {
    /// The JSON parser and the records loader (JSON → nodes): any bytes parse or fail with a
    /// `malformed-json` error at an offset inside them; what parses writes back to JSON that
    /// parses to the same value; and loading it against the music model gives one node per record
    /// with every relationship pointing at a loaded object whose inverse points back, or fails
    /// with an `invalid-data` error naming a JSON path.
    public static let records = FuzzTarget(name: "records") { bytes in
        let json: JSONValue
        do throws(StoreChainError) {
            json = try JSONParser().parse(bytes)
        } catch {
            guard error.code == .malformedJSON else { return "parsing failed with \(error.code): \(error)" }
            guard let offset = error.location?.offset, (0...bytes.count).contains(offset) else {
                return "the JSON error points outside the \(bytes.count) bytes: \(error)"
            }
            return nil
        }
        var written = ""
        JSONWriter.write(json, into: &written)
        guard let reparsed = try? JSONParser().parse(written), reparsed == json else {
            return "the parsed JSON writes as \(written.prefix(200).debugDescription), which does not parse back"
        }
        guard let model = RecordsFuzzing.model else { return "the music model does not build" }
        let dataset: Dataset
        do throws(StoreChainError) {
            dataset = try RecordLoader(model: model, source: "fuzz.json").load(json)
        } catch {
            guard error.code == .invalidData, error.location?.path?.hasPrefix("$") == true else {
                return "loading failed without an invalid-data error and a JSON path: \(error)"
            }
            return nil
        }
        return RecordsFuzzing.inconsistency(in: dataset, loadedFrom: json, model: model)
    }
}

enum RecordsFuzzing {
    static let model: ObjectModel? = try? MusicFixture.model()

    /// What is wrong with a loaded dataset: a record without its node, or a relationship that
    /// points nowhere or whose inverse does not point back.
    static func inconsistency(in dataset: Dataset, loadedFrom json: JSONValue, model: ObjectModel) -> String? {
        for entity in model.entities {
            guard case .array(let records) = json[entity.name] ?? .array([]) else { continue }
            let loaded = dataset.nodes(of: entity.name).count
            if loaded != records.count {
                return "\(records.count) \(entity.name) records loaded as \(loaded) nodes"
            }
            for node in dataset.nodes(of: entity.name) {
                for relationship in entity.relationships {
                    if let problem = brokenLink(from: node, through: relationship, in: dataset) { return problem }
                }
            }
        }
        return nil
    }

    private static func brokenLink(from node: Node, through relationship: RelationshipDescription, in dataset: Dataset)
        -> String?
    {
        for target in node.relationships[relationship.name]?.objectIDs ?? [] {
            guard let destination = dataset.node(for: target) else {
                return "\(node.id).\(relationship.name) points at \(target), which was not loaded"
            }
            guard let inverse = relationship.inverse else { continue }
            let back = destination.relationships[inverse]?.objectIDs ?? []
            if !back.contains(node.id) {
                return
                    "\(node.id).\(relationship.name) holds \(target), but \(target).\(inverse) does not hold \(node.id)"
            }
        }
        return nil
    }
}
