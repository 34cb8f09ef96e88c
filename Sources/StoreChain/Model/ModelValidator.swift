/// The rules a model must keep. Each problem's location path names the place in model-file
/// terms (`entities.Band.relationships.albums.inverse`) so a file loader can map it to a line.
enum ModelValidator {
    static func problems(in entities: [EntityDescription]) -> [StoreChainError] {
        var problems: [StoreChainError] = []
        func report(_ path: String, _ message: String, _ suggestion: String? = nil) {
            problems.append(StoreChainError(.invalidModel, message, at: .init(path: path), suggestion: suggestion))
        }
        var byName: [String: EntityDescription] = [:]
        for entity in entities {
            if byName[entity.name] != nil {
                report("entities.\(entity.name)", "entity '\(entity.name)' is declared twice", "rename or merge one")
            }
            byName[entity.name] = byName[entity.name] ?? entity
            if !isIdentifier(entity.name) {
                report(
                    "entities.\(entity.name)", "entity name '\(entity.name)' is not an identifier",
                    "use letters, digits and '_', not starting with a digit")
            }
        }
        for entity in entities {
            let base = "entities.\(entity.name)"
            var seen: Set<String> = []
            for attribute in entity.attributes {
                let path = "\(base).attributes.\(attribute.name)"
                if !seen.insert(attribute.name).inserted {
                    report(path, "'\(attribute.name)' is declared twice in entity '\(entity.name)'")
                }
                if !isIdentifier(attribute.name) {
                    report(
                        path, "attribute name '\(attribute.name)' is not an identifier",
                        "use letters, digits and '_', not starting with a digit")
                }
                if let value = attribute.defaultValue, !value.isNull, value.type != attribute.type {
                    report(
                        "\(path).default",
                        "default value \(value) is not of the attribute's type \(attribute.type.rawValue)")
                }
            }
            for relationship in entity.relationships {
                let path = "\(base).relationships.\(relationship.name)"
                if !seen.insert(relationship.name).inserted {
                    report(
                        path, "'\(relationship.name)' is declared twice in entity '\(entity.name)'",
                        "attributes and relationships share one namespace")
                }
                if !isIdentifier(relationship.name) {
                    report(path, "relationship name '\(relationship.name)' is not an identifier")
                }
                problems += relationshipProblems(relationship, of: entity, at: path, entities: byName)
            }
            if let key = entity.keyAttribute {
                if key.isOptional {
                    report(
                        "\(base).key", "key attribute '\(key.name)' must not be optional",
                        "remove the '?' from its type")
                }
                if !key.type.canBeKey {
                    report(
                        "\(base).key", "key attribute '\(key.name)' has type \(key.type.rawValue)",
                        "a key must be a string, integer or uuid")
                }
            } else {
                report(
                    "\(base).key", "key '\(entity.key)' is not an attribute of entity '\(entity.name)'",
                    Suggestion.didYouMean(entity.key, in: entity.attributes.map(\.name)))
            }
        }
        return problems
    }

    private static func relationshipProblems(
        _ relationship: RelationshipDescription, of entity: EntityDescription, at path: String,
        entities: [String: EntityDescription]
    ) -> [StoreChainError] {
        guard let destination = entities[relationship.destination] else {
            return [
                StoreChainError(
                    .invalidModel,
                    "relationship '\(relationship.name)' leads to entity '\(relationship.destination)', which does not exist",
                    at: .init(path: path),
                    suggestion: Suggestion.didYouMean(relationship.destination, in: Array(entities.keys)))
            ]
        }
        guard let inverseName = relationship.inverse else { return [] }
        let inversePath = "\(path).inverse"
        guard let inverse = destination.relationship(named: inverseName) else {
            return [
                StoreChainError(
                    .invalidModel,
                    "inverse '\(inverseName)' is not a relationship of entity '\(destination.name)'",
                    at: .init(path: inversePath),
                    suggestion: Suggestion.didYouMean(inverseName, in: destination.relationships.map(\.name)))
            ]
        }
        if inverse.destination != entity.name {
            return [
                StoreChainError(
                    .invalidModel,
                    "inverse '\(destination.name).\(inverseName)' leads to '\(inverse.destination)', not back to '\(entity.name)'",
                    at: .init(path: inversePath),
                    suggestion: "name a relationship of '\(destination.name)' that leads to '\(entity.name)'")
            ]
        }
        if inverse.inverse != relationship.name {
            return [
                StoreChainError(
                    .invalidModel,
                    "inverse '\(destination.name).\(inverseName)' does not name '\(relationship.name)' as its inverse",
                    at: .init(path: inversePath),
                    suggestion: "add 'inverse: \(relationship.name)' to '\(destination.name).\(inverseName)'")
            ]
        }
        return []
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}
