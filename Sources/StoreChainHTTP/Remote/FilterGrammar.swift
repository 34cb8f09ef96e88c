import StoreChain

/// How a backend spells a comparison for any of its fields, declared once instead of one
/// binding each: django-filter's `{field}__{lookup}={value}`, JSON:API's
/// `filter[{field}]={value}`, PostgREST's `{field}={lookup}.{value}`. Every field and lookup
/// becomes a query parameter of the endpoint with its binding, so each comparison the backend
/// can make is pushed; everything is re-checked in memory as with written-out bindings.
public struct FilterGrammar: Sendable, Hashable, Decodable {
    /// One comparison the backend makes, and its name there.
    public struct Lookup: Sendable, Hashable {
        /// The comparison.
        public var operation: ParameterBinding.Operation
        /// The backend ignores case when it compares (django-filter's `icontains`): it then also
        /// serves `[c]` comparisons. Declare it only where its folding is Unicode's; a backend
        /// over SQLite's `LIKE` folds ASCII letters only.
        public var caseInsensitive: Bool
        /// The lookup's name, put where the parameter pattern says `{lookup}` (`startswith`).
        public var name: String

        /// A lookup `name` for `operation`.
        public init(_ operation: ParameterBinding.Operation, _ name: String, caseInsensitive: Bool = false) {
            self.operation = operation
            self.caseInsensitive = caseInsensitive
            self.name = name
        }
    }

    /// The query parameter's name, with `{field}` and `{lookup}` (`{field}__{lookup}`).
    public var parameter: String
    /// Its value, with `{value}` and `{lookup}` (`{value}` by default; PostgREST's
    /// `{lookup}.{value}`).
    public var value: String
    /// The comparisons the backend makes.
    public var lookups: [Lookup]
    /// Each key path the backend filters by (`name`, `album.id`) → its field name there.
    public var fields: [String: String]
    /// Which letters the case-insensitive lookups fold (`ascii` for SQLite's `LIKE`).
    public var caseFolding: ParameterBinding.CaseFolding

    /// A grammar of `parameter` and `value` over `fields`, for `lookups`.
    public init(
        parameter: String, value: String = "{value}", lookups: [Lookup], fields: [String: String],
        caseFolding: ParameterBinding.CaseFolding = .unicode
    ) {
        self.parameter = parameter
        self.value = value
        self.lookups = lookups
        self.fields = fields
        self.caseFolding = caseFolding
    }

    private enum Keys: String, CodingKey {
        case parameter, value, lookups, fields, caseFolding
    }

    /// `{ parameter: "{field}__{lookup}", lookups: { equal: exact, begins-with: startswith,
    /// contains[c]: icontains, one-of: in }, fields: [name, year, { album.id: album }] }`:
    /// `fields` is a list of names (or a mapping where the backend's names differ); a lookup
    /// written with `[c]` ignores case, folding the letters `case-folding` says (`unicode` by
    /// default, or `ascii`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        var lookups: [Lookup] = []
        for (key, name) in try container.decode([String: String].self, forKey: .lookups).sorted(by: { $0.key < $1.key })
        {
            let caseInsensitive = key.hasSuffix("[c]")
            let written = caseInsensitive ? String(key.dropLast(3)) : key
            guard
                let operation = ParameterBinding.Operation.allCases.first(where: {
                    ConfigurationDecoding.normalized($0.rawValue) == ConfigurationDecoding.normalized(written)
                })
            else {
                throw StoreChainError(
                    .invalidPipeline, "'\(written)' is not a comparison a filter grammar can name",
                    suggestion: Suggestion.didYouMean(
                        written,
                        in: ParameterBinding.Operation.allCases.map { ConfigurationDecoding.fileName($0.rawValue) }))
            }
            lookups.append(Lookup(operation, name, caseInsensitive: caseInsensitive))
        }
        var fields: [String: String] = [:]
        if let names = try? container.decode([String].self, forKey: .fields) {
            for name in names { fields[name] = name }
        } else {
            fields = try container.decode([String: String].self, forKey: .fields)
        }
        let parameter = try container.decode(String.self, forKey: .parameter)
        guard parameter.contains("{field}") else {
            throw StoreChainError(
                .invalidPipeline, "the filter parameter '\(parameter)' does not say where the field goes",
                suggestion: "write {field} in it, such as {field}__{lookup} or filter[{field}]")
        }
        self.init(
            parameter: parameter, value: try container.decodeIfPresent(String.self, forKey: .value) ?? "{value}",
            lookups: lookups, fields: fields,
            caseFolding: try container.decodeIfPresent(ParameterBinding.CaseFolding.self, forKey: .caseFolding)
                ?? .unicode)
    }

    /// `endpoint` with a query parameter and binding for every field and lookup.
    func expand(_ endpoint: RemoteEndpoint) -> RemoteEndpoint {
        var expanded = endpoint
        var request = endpoint.request
        var index = endpoint.bind.keys.filter { $0.hasPrefix("filter ") }.count
        for (keyPath, field) in fields.sorted(by: { $0.key < $1.key }) {
            for lookup in lookups {
                index += 1
                let variable = "filter \(index)"
                let name = parameter.replacingOccurrences(of: "{field}", with: field)
                    .replacingOccurrences(of: "{lookup}", with: lookup.name)
                let text = value.replacingOccurrences(of: "{lookup}", with: lookup.name)
                    .replacingOccurrences(of: "{value}", with: "{\(variable)}")
                request += (request.contains("?") ? "&" : "?") + "\(name)=\(text)"
                expanded.bind[variable] = ParameterBinding(
                    keyPath, lookup.operation, caseInsensitive: lookup.caseInsensitive, caseFolding: caseFolding)
            }
        }
        expanded.request = request
        expanded.filters.removeAll { $0 == self }
        return expanded
    }
}
