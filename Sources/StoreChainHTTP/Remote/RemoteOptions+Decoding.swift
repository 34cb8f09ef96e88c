import Foundation
import StoreChain

// How remote options are written in pipeline files: every option but the base URL and the
// entities may be left out, and names are spelled as files spell them (`base-url`,
// `per-page`, `begins-with`).

extension RemoteOptions {
    private enum Keys: String, CodingKey {
        case baseURL, headers, auth, timeout, maxPages, badRecords, entities, changes, included
    }

    private struct Auth: Decodable {
        var bearer: String?
        var bearerEnv: String?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let auth = try container.decodeIfPresent(Auth.self, forKey: .auth)
        // Each entity on its own, so one bad mapping does not hide the next.
        let mappings = try container.nestedContainer(keyedBy: ConfigurationDecoding.AnyKey.self, forKey: .entities)
        var entities: [String: RemoteEntityOptions] = [:]
        var problems: [StoreChainError] = []
        for key in mappings.allKeys {
            do {
                entities[key.stringValue] = try mappings.decode(RemoteEntityOptions.self, forKey: key)
            } catch let error as StoreChainError {
                problems.append(error)
            } catch let failure as ValidationFailure {
                problems += failure.errors
            }
        }
        if !problems.isEmpty { throw ValidationFailure(problems) }
        self.init(
            baseURL: try container.decode(URL.self, forKey: .baseURL),
            entities: entities,
            headers: try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:],
            bearerTokenVariable: auth?.bearerEnv,
            timeoutSeconds: try container.decodeIfPresent(TimeSpan.self, forKey: .timeout)?.duration.timeInterval ?? 30,
            maxPages: try container.decodeIfPresent(Int.self, forKey: .maxPages) ?? 1_000,
            badRecords: try container.decodeIfPresent(BadRecordPolicy.self, forKey: .badRecords) ?? .fail,
            changes: try container.decodeIfPresent(RemoteChangesOptions.self, forKey: .changes),
            included: try container.decodeIfPresent(IncludedResources.self, forKey: .included))
        bearerToken = auth?.bearer
    }
}

extension RemoteEntityOptions {
    private enum Keys: String, CodingKey {
        case records, key, attributes, relationships, dateFormat, fetch, get, create, update, delete, version,
            omitsNulls
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            records: try container.decodeIfPresent(String.self, forKey: .records),
            key: try container.decodeIfPresent(String.self, forKey: .key),
            attributes: try container.decodeIfPresent([String: String].self, forKey: .attributes) ?? [:],
            relationships: try container.decodeIfPresent([String: RemoteRelationship].self, forKey: .relationships)
                ?? [:],
            dateFormat: try container.decodeIfPresent(DateFormat.self, forKey: .dateFormat) ?? .iso8601,
            fetch: try container.decodeIfPresent([RemoteEndpoint].self, forKey: .fetch) ?? [],
            get: try container.decodeIfPresent(String.self, forKey: .get),
            create: try container.decodeIfPresent(String.self, forKey: .create),
            update: try container.decodeIfPresent(String.self, forKey: .update),
            delete: try container.decodeIfPresent(String.self, forKey: .delete),
            version: try container.decodeIfPresent(String.self, forKey: .version),
            omitsNulls: try container.decodeIfPresent(Bool.self, forKey: .omitsNulls) ?? false)
    }
}

extension RemoteRelationship {
    private enum EndpointKeys: String, CodingKey {
        case request, paging
    }

    /// `{ foreign-key: band_id }`, `{ link: band }`, `{ embedded: albums }`,
    /// `{ endpoint: "GET /bands/{id}/albums" }`
    /// or `{ endpoint: { request: "GET /albums/{id}/tracks/?page={page}", paging: { pages: { page: page,
    /// size: 50, next: next } } } }` (any paging style a fetch endpoint takes).
    public init(from decoder: any Decoder) throws {
        let (variant, key, container) = try ConfigurationDecoding.variant(
            of: decoder, among: ["foreign-key", "link", "embedded", "endpoint"], what: "relationship mapping")
        if variant == "endpoint", (try? container.decode(String.self, forKey: key)) == nil {
            let endpoint = try container.nestedContainer(keyedBy: EndpointKeys.self, forKey: key)
            self = .endpoint(
                try endpoint.decode(String.self, forKey: .request),
                paging: try endpoint.decodeIfPresent(PagingFacts.self, forKey: .paging) ?? PagingFacts(),
                style: try endpoint.decodeIfPresent(Paging.self, forKey: .paging) ?? .link)
            return
        }
        let value = try container.decode(String.self, forKey: key)
        switch variant {
        case "foreign-key": self = .foreignKey(value)
        case "link": self = .link(value)
        case "embedded": self = .embedded(value)
        default: self = .endpoint(value)
        }
    }
}

extension RemoteEndpoint {
    private enum Keys: String, CodingKey {
        case request, bind, sort, paging, records, single, keyOrdered, filter
    }

    /// `"GET /bands"`, or `{ request: "GET /bands?page={page}", paging: …, bind: …, sort: … }`;
    /// `filter` is one grammar or a list of them.
    public init(from decoder: any Decoder) throws {
        if let request = try? decoder.singleValueContainer().decode(String.self) {
            self.init(request)
            return
        }
        let container = try decoder.container(keyedBy: Keys.self)
        let filters: [FilterGrammar]
        if (try? container.nestedUnkeyedContainer(forKey: .filter)) != nil {
            filters = try container.decode([FilterGrammar].self, forKey: .filter)
        } else {
            filters = try container.decodeIfPresent(FilterGrammar.self, forKey: .filter).map { [$0] } ?? []
        }
        self.init(
            try container.decode(String.self, forKey: .request),
            bind: try container.decodeIfPresent([String: ParameterBinding].self, forKey: .bind) ?? [:],
            sort: try container.decodeIfPresent(SortBinding.self, forKey: .sort),
            paging: try container.decodeIfPresent(Paging.self, forKey: .paging),
            pagingFacts: try container.decodeIfPresent(PagingFacts.self, forKey: .paging) ?? .init(),
            filters: filters,
            records: try container.decodeIfPresent(String.self, forKey: .records),
            single: try container.decodeIfPresent(Bool.self, forKey: .single) ?? false,
            keyOrdered: try container.decodeIfPresent(Bool.self, forKey: .keyOrdered) ?? false)
    }
}

extension SortBinding {
    private enum Keys: String, CodingKey {
        case variable, values, separator, descendingPrefix, ascending, descending, fields, tiesInKeyOrder, nils
    }

    /// `{ variable: sort, values: { name: name, -name: -name }, ties-in-key-order: true }`, or a grammar: `{ variable:
    /// ordering, separator: ",", descending-prefix: "-", fields: [name, year, id] }` (or `fields:
    /// { year: release_year }` where the backend's names differ); `ascending: "{field}.asc"` and
    /// `descending: "{field}.desc"` where the direction is not a prefix; `nils: smallest` (SQLite,
    /// MySQL) or `largest` (PostgreSQL) for where the backend sorts records without a value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        var fields: [String: String] = [:]
        if let names = try? container.decodeIfPresent([String].self, forKey: .fields) {
            fields = Dictionary(names.map { ($0, $0) }, uniquingKeysWith: { first, _ in first })
        } else {
            fields = try container.decodeIfPresent([String: String].self, forKey: .fields) ?? [:]
        }
        let separator = try container.decodeIfPresent(String.self, forKey: .separator)
        let values = try container.decodeIfPresent([String: String].self, forKey: .values) ?? [:]
        guard separator != nil || !values.isEmpty else {
            throw StoreChainError(
                .invalidPipeline, "a sort takes 'values' or a grammar ('separator' and 'fields'); it has neither",
                suggestion: "write values: { name: name, -name: -name }, or separator: \",\", fields: [name, id]")
        }
        guard separator == nil || !fields.isEmpty else {
            throw StoreChainError(
                .invalidPipeline, "a sort grammar needs 'fields': the attributes the backend sorts by",
                suggestion: "list them, such as fields: [name, year, id]; the backend may ignore others")
        }
        let ascending = try container.decodeIfPresent(String.self, forKey: .ascending) ?? "{field}"
        let descending = try container.decodeIfPresent(String.self, forKey: .descending)
        for (name, pattern) in [("ascending", ascending), ("descending", descending ?? "{field}")]
        where !pattern.contains("{field}") {
            throw StoreChainError(
                .invalidPipeline, "the sort's \(name) key '\(pattern)' does not say where the field goes",
                suggestion: "write {field} in it, such as {field}.desc or \"{field} desc\"")
        }
        self.init(
            variable: try container.decode(String.self, forKey: .variable), values: values, separator: separator,
            descendingPrefix: try container.decodeIfPresent(String.self, forKey: .descendingPrefix) ?? "-",
            ascending: ascending, descending: descending, fields: fields,
            tiesInKeyOrder: try container.decodeIfPresent(Bool.self, forKey: .tiesInKeyOrder) ?? false,
            nils: try container.decodeIfPresent(NilOrder.self, forKey: .nils))
    }
}

extension ParameterBinding {
    private enum Keys: String, CodingKey {
        case keyPath, operation, caseInsensitive, required
    }

    /// `name` (equality on that key path), or `{ key-path: name, operation: begins-with,
    /// case-insensitive: true, required: true }`; `case-insensitive: ascii` for a backend that
    /// folds ASCII letters only.
    public init(from decoder: any Decoder) throws {
        if let keyPath = try? decoder.singleValueContainer().decode(String.self) {
            self.init(keyPath)
            return
        }
        let container = try decoder.container(keyedBy: Keys.self)
        var caseInsensitive = false
        var caseFolding = CaseFolding.unicode
        if let flag = try? container.decodeIfPresent(Bool.self, forKey: .caseInsensitive) {
            caseInsensitive = flag
        } else if let folding = try container.decodeIfPresent(CaseFolding.self, forKey: .caseInsensitive) {
            (caseInsensitive, caseFolding) = (true, folding)
        }
        self.init(
            try container.decode(String.self, forKey: .keyPath),
            try container.decodeIfPresent(Operation.self, forKey: .operation) ?? .equal,
            caseInsensitive: caseInsensitive, caseFolding: caseFolding,
            required: try container.decodeIfPresent(Bool.self, forKey: .required) ?? false)
    }
}

extension Paging {
    private enum Keys: String, CodingKey {
        case page, perPage, size, first, variable, next, limit, offset
    }

    /// `link`, `{ pages: { page: page, per-page: per_page, size: 100, first: 1 } }`,
    /// `{ cursor: { variable: cursor, next: next_cursor, limit: limit, size: 100 } }` (`next: {
    /// last-record: id }` for a cursor that is the last record's key) or
    /// `{ offset: { offset: offset, limit: limit, size: 50 } }`.
    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            guard ConfigurationDecoding.normalized(text) == "link" else {
                throw StoreChainError(
                    .invalidPipeline, "'\(text)' is not a paging style",
                    suggestion: "write link, or { pages: … }, { cursor: … } or { offset: … }")
            }
            self = .link
            return
        }
        let (variant, key, outer) = try ConfigurationDecoding.variant(
            of: decoder, among: ["pages", "cursor", "offset", "link"], what: "paging style")
        if variant == "link" {
            self = .link
            return
        }
        let container = try outer.nestedContainer(keyedBy: Keys.self, forKey: key)
        let size = try container.decodeIfPresent(Int.self, forKey: .size) ?? 100
        switch variant {
        case "pages":
            self = .pages(
                page: try container.decodeIfPresent(String.self, forKey: .page) ?? "page",
                perPage: try container.decodeIfPresent(String.self, forKey: .perPage) ?? "per_page", size: size,
                first: try container.decodeIfPresent(Int.self, forKey: .first) ?? 1)
        case "cursor":
            self = .cursor(
                variable: try container.decodeIfPresent(String.self, forKey: .variable) ?? "cursor",
                next: try container.decode(CursorPlace.self, forKey: .next),
                limit: try container.decodeIfPresent(String.self, forKey: .limit), size: size)
        default:
            self = .offset(
                offset: try container.decodeIfPresent(String.self, forKey: .offset) ?? "offset",
                limit: try container.decodeIfPresent(String.self, forKey: .limit) ?? "limit", size: size)
        }
    }
}

extension Paging.CursorPlace: Decodable {
    /// A JSON path in the body (`next_cursor`), or `{ last-record: id }`.
    public init(from decoder: any Decoder) throws {
        if let path = try? decoder.singleValueContainer().decode(String.self) {
            self = .body(path)
            return
        }
        let (variant, key, container) = try ConfigurationDecoding.variant(
            of: decoder, among: ["body", "last-record"], what: "place of the next cursor")
        let path = try container.decode(String.self, forKey: key)
        self = variant == "body" ? .body(path) : .lastRecord(path)
    }
}
