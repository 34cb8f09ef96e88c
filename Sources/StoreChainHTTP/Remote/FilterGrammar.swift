import StoreChain

/// How a backend spells a comparison for any of its fields, declared once instead of one
/// binding each: django-filter's `{field}__{lookup}={value}`, JSON:API's
/// `filter[{field}]={value}`, PostgREST's `{field}={lookup}.{value}`, or one expression for
/// every comparison (OData's `$filter=year ge 1990 and contains(title,'a')`). Every field and
/// lookup becomes a query parameter (or a part of the expression) with its binding, so each
/// comparison the backend can make is pushed; everything is re-checked in memory as with
/// written-out bindings.
public struct FilterGrammar: Sendable, Hashable, Decodable {
    /// How a backend that reads every comparison from one expression (OData's `$filter`) wants
    /// it written. Each lookup's name is then the pattern of its part of the expression, with
    /// `{field}` and `{value}`: `{field} ge {value}`, `contains({field},{value})`,
    /// `{field} in ({value})` (a list is written with commas).
    public struct Expression: Sendable, Hashable {
        /// The query parameter that holds the expression (`$filter`).
        public var parameter: String
        /// What joins two parts (` and `).
        public var and: String
        /// What joins the operands of an OR (` or `), when the backend has it: an OR of
        /// comparisons its parts write exactly is then sent whole, in parentheses
        /// (`(composer eq null or milliseconds lt 60000)`).
        public var or: String?
        /// What a string value is written between, doubled inside it (`'`: `'O''Brien'`).
        /// Numbers, booleans, dates (ISO-8601) and UUIDs are written bare.
        public var quote: String
        /// How the backend writes nil (`null`), when it compares with it: `== nil` is then
        /// written with the `equal` lookup's pattern and `!= nil` with `not-equal`'s.
        public var null: String?

        /// An expression sent in `parameter`.
        public init(
            parameter: String, and: String = " and ", or: String? = nil, quote: String = "'", null: String? = nil
        ) {
            self.parameter = parameter
            self.and = and
            self.or = or
            self.quote = quote
            self.null = null
        }

        /// A value as the expression writes it.
        func literal(_ value: Value) -> String {
            switch value {
            case .null: null ?? "null"
            case .integer, .double, .decimal, .bool, .date, .uuid: QueryPlanner.parameterText(value)
            default: quote + value.description.replacingOccurrences(of: quote, with: quote + quote) + quote
            }
        }
    }

    /// One part of an expression: a field's pattern for one lookup.
    struct Part: Sendable, Hashable {
        /// The variable of the whole expression in the endpoint's request.
        let expression: String
        let spelling: Expression
        /// `{value}` is left to fill; for a nil test, the pattern of `== nil`.
        let pattern: String
        /// For a nil test, the pattern of `!= nil`.
        let negatedPattern: String?

        /// The part for `values` (what `QueryPlanner.bind` took).
        func written(_ values: [Value]) -> String {
            if let negatedPattern {
                let isNil = values.first == .bool(true)
                return (isNil ? pattern : negatedPattern).replacingOccurrences(
                    of: "{value}", with: spelling.literal(.null))
            }
            return pattern.replacingOccurrences(
                of: "{value}", with: values.map(spelling.literal).joined(separator: ","))
        }
    }

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
    /// The expression every comparison is written into, for a backend that reads one
    /// (`parameter` and `value` are then unused).
    public var expression: Expression?

    /// A grammar of `parameter` and `value` over `fields`, for `lookups`.
    public init(
        parameter: String, value: String = "{value}", lookups: [Lookup], fields: [String: String],
        caseFolding: ParameterBinding.CaseFolding = .unicode
    ) {
        self.expression = nil
        self.parameter = parameter
        self.value = value
        self.lookups = lookups
        self.fields = fields
        self.caseFolding = caseFolding
    }

    /// A grammar that writes every comparison into `expression`, each lookup's name the
    /// pattern of its part.
    public init(
        expression: Expression, lookups: [Lookup], fields: [String: String],
        caseFolding: ParameterBinding.CaseFolding = .unicode
    ) {
        self.init(parameter: expression.parameter, lookups: lookups, fields: fields, caseFolding: caseFolding)
        self.expression = expression
    }

    private enum Keys: String, CodingKey {
        case parameter, value, lookups, fields, caseFolding, expression, and, or, quote, null
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
        let caseFolding =
            try container.decodeIfPresent(ParameterBinding.CaseFolding.self, forKey: .caseFolding) ?? .unicode
        if let parameter = try container.decodeIfPresent(String.self, forKey: .expression) {
            for lookup in lookups where !lookup.name.contains("{field}") || !lookup.name.contains("{value}") {
                throw StoreChainError(
                    .invalidPipeline,
                    "the expression pattern '\(lookup.name)' does not say where the field and the value go",
                    suggestion: "write {field} and {value} in it, such as '{field} eq {value}' or "
                        + "'contains({field},{value})'")
            }
            let expression = Expression(
                parameter: parameter, and: try container.decodeIfPresent(String.self, forKey: .and) ?? " and ",
                or: try container.decodeIfPresent(String.self, forKey: .or),
                quote: try container.decodeIfPresent(String.self, forKey: .quote) ?? "'",
                null: try container.decodeIfPresent(String.self, forKey: .null))
            self.init(expression: expression, lookups: lookups, fields: fields, caseFolding: caseFolding)
            return
        }
        let parameter = try container.decode(String.self, forKey: .parameter)
        guard parameter.contains("{field}") else {
            throw StoreChainError(
                .invalidPipeline, "the filter parameter '\(parameter)' does not say where the field goes",
                suggestion: "write {field} in it, such as {field}__{lookup} or filter[{field}]")
        }
        self.init(
            parameter: parameter, value: try container.decodeIfPresent(String.self, forKey: .value) ?? "{value}",
            lookups: lookups, fields: fields, caseFolding: caseFolding)
    }

    /// `endpoint` with a query parameter and binding for every field and lookup, or with the
    /// expression's parameter and a part and binding for every field and lookup.
    func expand(_ endpoint: RemoteEndpoint) -> RemoteEndpoint {
        var expanded = endpoint
        var request = endpoint.request
        var index = endpoint.bind.keys.filter { $0.hasPrefix("filter ") }.count
        // Grammars that name the same parameter write one expression.
        let sameParameter = endpoint.expressionParts.values.first { $0.spelling.parameter == expression?.parameter }
        let whole =
            sameParameter?.expression
            ?? "filter expression \(Set(endpoint.expressionParts.values.map(\.expression)).count + 1)"
        if let expression, sameParameter == nil {
            request += (request.contains("?") ? "&" : "?") + "\(expression.parameter)={\(whole)}"
        }
        for (keyPath, field) in fields.sorted(by: { $0.key < $1.key }) {
            for lookup in lookups {
                index += 1
                let variable = "filter \(index)"
                expanded.bind[variable] = ParameterBinding(
                    keyPath, lookup.operation, caseInsensitive: lookup.caseInsensitive, caseFolding: caseFolding)
                if let expression {
                    expanded.expressionParts[variable] = Part(
                        expression: whole, spelling: expression,
                        pattern: lookup.name.replacingOccurrences(of: "{field}", with: field), negatedPattern: nil)
                    continue
                }
                let name = parameter.replacingOccurrences(of: "{field}", with: field)
                    .replacingOccurrences(of: "{lookup}", with: lookup.name)
                let text = value.replacingOccurrences(of: "{lookup}", with: lookup.name)
                    .replacingOccurrences(of: "{value}", with: "{\(variable)}")
                request += (request.contains("?") ? "&" : "?") + "\(name)=\(text)"
            }
            // With a nil, the equal and not-equal patterns test for nil.
            if let expression, expression.null != nil,
                let equal = lookups.first(where: { $0.operation == .equal && !$0.caseInsensitive }),
                let notEqual = lookups.first(where: { $0.operation == .notEqual && !$0.caseInsensitive })
            {
                index += 1
                let variable = "filter \(index)"
                expanded.bind[variable] = ParameterBinding(keyPath, .isNull)
                expanded.expressionParts[variable] = Part(
                    expression: whole, spelling: expression,
                    pattern: equal.name.replacingOccurrences(of: "{field}", with: field),
                    negatedPattern: notEqual.name.replacingOccurrences(of: "{field}", with: field))
            }
        }
        expanded.request = request
        expanded.filters.removeAll { $0 == self }
        return expanded
    }
}
