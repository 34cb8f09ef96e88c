/// A key path checked against the model: the relationships it goes through and where it ends.
package struct ResolvedKeyPath: Sendable, Hashable {
    /// One relationship crossed on the way.
    package struct Step: Sendable, Hashable {
        package let relationship: RelationshipDescription
        package let destination: EntityDescription
    }

    /// Where the key path ends.
    package enum Terminal: Sendable, Hashable {
        case attribute(AttributeDescription)
        case relationship(RelationshipDescription)
    }

    package let components: [String]
    package let steps: [Step]
    package let terminal: Terminal

    /// Whether the key path goes through a to-many relationship, so it leads to many values.
    package var isCollection: Bool {
        steps.contains { $0.relationship.isToMany }
    }

    /// The attribute at the end, if it ends at one.
    package var attribute: AttributeDescription? {
        if case .attribute(let attribute) = terminal { return attribute }
        return nil
    }

    /// Whether following `relationship` to `destination` and reading `rest` there needs only the
    /// ID the relationship holds, never the object: `band.id`, where `id` is the band's key,
    /// through a to-one (a to-many is read object by object). The one place that rule is written.
    package static func readsOnlyTheKey(
        through relationship: RelationshipDescription, to destination: EntityDescription,
        then rest: some Collection<String>
    ) -> Bool {
        !relationship.isToMany && rest.count == 1 && rest.first == destination.key
    }

    /// Whether the path ends at the key of its last to-one's destination (`band.id`): the
    /// relationship's ID answers it (`readsOnlyTheKey`).
    package var endsAtRelatedKey: Bool {
        guard let last = steps.last, let attribute else { return false }
        return Self.readsOnlyTheKey(through: last.relationship, to: last.destination, then: [attribute.name])
    }

    /// The steps whose destination objects reading the path needs: all but a last one whose
    /// key it ends at.
    package var objectSteps: ArraySlice<Step> { endsAtRelatedKey ? steps.dropLast() : steps[...] }

    /// Resolves `components` from `entity`, or says which component is wrong.
    package init(_ components: [String], from entity: EntityDescription, in model: ObjectModel) throws(StoreChainError)
    {
        var steps: [Step] = []
        var current = entity
        let text = components.joined(separator: ".")
        for (position, name) in components.enumerated() {
            let isLast = position == components.count - 1
            if let attribute = current.attribute(named: name) {
                guard isLast else {
                    throw StoreChainError(
                        .unknownKeyPath,
                        "key path '\(text)' continues after attribute '\(current.name).\(name)', which has no keys",
                        suggestion: "only relationships can be followed with '.'")
                }
                self.init(components: components, steps: steps, terminal: .attribute(attribute))
                return
            }
            guard let relationship = current.relationship(named: name) else {
                throw StoreChainError(
                    .unknownKeyPath,
                    "entity '\(current.name)' has no attribute or relationship '\(name)' (in key path '\(text)')",
                    suggestion: Suggestion.didYouMean(name, in: current.propertyNames))
            }
            if isLast {
                self.init(components: components, steps: steps, terminal: .relationship(relationship))
                return
            }
            guard let destination = model.entity(named: relationship.destination) else {
                throw StoreChainError(
                    .invalidModel, "relationship '\(name)' leads to unknown entity '\(relationship.destination)'")
            }
            steps.append(Step(relationship: relationship, destination: destination))
            current = destination
        }
        throw StoreChainError(.unknownKeyPath, "empty key path")
    }

    private init(components: [String], steps: [Step], terminal: Terminal) {
        self.components = components
        self.steps = steps
        self.terminal = terminal
    }
}
