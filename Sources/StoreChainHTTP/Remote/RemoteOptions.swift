import Foundation
import StoreChain

/// How to reach a backend and how its data maps to the model: typed options, written in Swift
/// or (later) in a pipeline file.
///
/// ```swift
/// var band = RemoteEntityOptions(records: "data")
/// band.attributes = ["name": "attributes.name", "founded": "attributes.founded_at"]
/// band.fetch = [RemoteEndpoint("GET /bands/search?name={name}", bind: ["name": .init("name", .beginsWith, caseInsensitive: true)])]
/// band.get = "GET /bands/{id}"
/// let options = RemoteOptions(baseURL: URL(string: "http://127.0.0.1:8080/v2")!, entities: ["Band": band])
/// ```
public struct RemoteOptions: Sendable, Hashable, Decodable {
    /// The backend's address; request templates are relative to it.
    public var baseURL: URL
    /// Extra headers sent with every request.
    public var headers: [String: String]
    /// Bearer authentication from an environment variable (its value is never logged).
    public var bearerTokenVariable: String?
    /// A bearer token given directly (a pipeline file's `auth: { bearer: "${TOKEN}" }`); never
    /// logged.
    public var bearerToken: String?
    /// How long one HTTP request may take.
    public var timeoutSeconds: Double
    /// At most this many pages are read for one fetch; more is an error, not an endless loop.
    public var maxPages: Int
    /// What to do with a record that cannot be mapped: fail the request, or skip it and count it.
    public var badRecords: BadRecordPolicy
    /// How each entity maps onto the backend, by entity name.
    public var entities: [String: RemoteEntityOptions]
    /// The backend's change feed, when it has one (`ChangeFeedHandler` follows it).
    public var changes: RemoteChangesOptions?
    /// Related records the backend sends beside the primary ones (JSON:API's `included`).
    public var included: IncludedResources?

    /// What to do with a record that cannot be mapped.
    public enum BadRecordPolicy: String, Sendable, Hashable, CaseIterable, Decodable {
        /// Fail the request, or skip the record (counted in `ResponseInfo.skippedRecords`).
        case fail, skip

        public init(from decoder: any Decoder) throws {
            self = try ConfigurationDecoding.enumCase(Self.self, from: decoder, what: "bad-records policy")
        }
    }

    /// Options for the backend at `baseURL`; each option has the default the pipeline reference names.
    public init(
        baseURL: URL, entities: [String: RemoteEntityOptions], headers: [String: String] = [:],
        bearerTokenVariable: String? = nil, timeoutSeconds: Double = 30, maxPages: Int = 1_000,
        badRecords: BadRecordPolicy = .fail, changes: RemoteChangesOptions? = nil, included: IncludedResources? = nil
    ) {
        self.changes = changes
        self.included = included
        self.baseURL = baseURL
        self.entities = entities
        self.headers = headers
        self.bearerTokenVariable = bearerTokenVariable
        self.timeoutSeconds = timeoutSeconds
        self.maxPages = maxPages
        self.badRecords = badRecords
    }
}

/// One entity's mapping and endpoints.
public struct RemoteEntityOptions: Sendable, Hashable, Decodable {
    /// Where the records sit in a list response (`data`, `data.items`); `nil` when the body is
    /// the array itself.
    public var records: String?
    /// The remote field holding the key; the entity's key attribute name when `nil`.
    public var key: String?
    /// Attribute name → remote key path (`attributes.founded_at`); unlisted attributes use their
    /// own name.
    public var attributes: [String: String]
    /// Relationship name → where a record holds it (`RemoteRelationship`).
    public var relationships: [String: RemoteRelationship]
    /// How dates are written in request bodies.
    public var dateFormat: DateFormat
    /// Endpoints that list or search objects, in order of preference when equally good.
    public var fetch: [RemoteEndpoint]
    /// Get one object by key: `GET /bands/{id}` (a 404 means it no longer exists).
    public var get: String?
    /// Create, update and delete: `POST /bands`, `PATCH /bands/{id}`, `DELETE /bands/{id}`.
    public var create: String?
    /// The update request, with the changed fields in its body.
    public var update: String?
    /// The delete request.
    public var delete: String?
    /// Where a record holds its version (a revision number or an ETag), when it has one:
    /// updates and deletes are then sent with `If-Match` naming the version they are based on, and a
    /// backend that has a newer one answers 412 (see the outbox's `conflict-policy`).
    public var version: String?
    /// Whether the records leave out a field whose value is null (a serializer set to drop nulls,
    /// or Spring's HAL links): a relationship a record does not mention is then none. By default
    /// it is not known, and read again where needed (a list serializer that leaves fields out).
    public var omitsNulls: Bool

    /// How dates are written in request bodies.
    public enum DateFormat: String, Sendable, Hashable, CaseIterable, Decodable {
        /// ISO 8601 text, or seconds since 1970.
        case iso8601, epochSeconds

        public init(from decoder: any Decoder) throws {
            self = try ConfigurationDecoding.enumCase(Self.self, from: decoder, what: "date format")
        }
    }

    /// An entity's mapping; what is not given takes the defaults the pipeline reference names.
    public init(
        records: String? = nil, key: String? = nil, attributes: [String: String] = [:],
        relationships: [String: RemoteRelationship] = [:], dateFormat: DateFormat = .iso8601,
        fetch: [RemoteEndpoint] = [], get: String? = nil, create: String? = nil, update: String? = nil,
        delete: String? = nil, version: String? = nil, omitsNulls: Bool = false
    ) {
        self.records = records
        self.key = key
        self.attributes = attributes
        self.relationships = relationships
        self.dateFormat = dateFormat
        self.fetch = fetch
        self.get = get
        self.create = create
        self.update = update
        self.delete = delete
        self.version = version
        self.omitsNulls = omitsNulls
    }
}

/// Where a relationship's value is in a record.
public enum RemoteRelationship: Sendable, Hashable, Decodable {
    /// A field holding the destination's key (to-one) or an array of keys (to-many).
    case foreignKey(String)
    /// A field holding the URL of the destination object (to-one), or an array of them
    /// (to-many), as hyperlinked APIs write relationships (Django REST Framework's
    /// `HyperlinkedModelSerializer`, HAL's `_links`): the key is read from the URL by matching
    /// the destination's `get` endpoint, and a save writes the URL that endpoint makes.
    case link(String)
    /// A nested record (to-one) or array of records (to-many) of the destination; the nodes
    /// learned from it are returned too.
    case embedded(String)
    /// The relationship has its own endpoint, such as `GET /bands/{id}/albums`, with `{id}` the
    /// owner's key. Its pages are asked for as `style` says, as a fetch endpoint's are: by default
    /// by following the next link; `paging` says where its answers state the next link, a
    /// more-pages flag or the total (by default the `Link` and `X-Total-Count` headers).
    case endpoint(String, paging: PagingFacts = PagingFacts(), style: Paging = .link)

    /// Whether the owner's own record holds it (a foreign key, link or embedded record), as
    /// against an endpoint of its own.
    var isInTheRecord: Bool {
        if case .endpoint = self { false } else { true }
    }

    /// Each record names its destination objects by key (a foreign key or a link).
    var keyInRecord: Bool {
        switch self {
        case .foreignKey, .link: true
        case .embedded, .endpoint: false
        }
    }
}

/// A fetch endpoint: a request template and how its variables bind to the fetch request.
public struct RemoteEndpoint: Sendable, Hashable, Decodable {
    /// `GET /bands/search?name={name}&page={page}`.
    public var request: String
    /// Variable → what it filters on. A variable with no binding filters its same-named
    /// attribute for equality.
    public var bind: [String: ParameterBinding]
    /// A variable that takes the sort, and the values it takes for each sort key (`-year` for
    /// descending).
    public var sort: SortBinding?
    /// How the endpoint pages, when it does.
    public var paging: Paging?
    /// Where its answers say how the listing goes on (next link, more-pages flag, total):
    /// written beside the paging style's options in files.
    public var pagingFacts: PagingFacts
    /// How the backend spells comparisons for its fields, each grammar declared once for the
    /// fields that take its lookups: a query parameter and binding for each field and lookup,
    /// beside those of `bind`.
    public var filters: [FilterGrammar]
    /// Where the records are in this endpoint's response, when not where the entity says.
    public var records: String?
    /// The response is one record, not a list (a get-by-key endpoint).
    public var single: Bool
    /// Without a sort variable the endpoint lists records in key order, so a pager can read
    /// only the pages an unsorted window needs.
    public var keyOrdered: Bool
    /// The parts of filter expressions (`FilterGrammar.Expression`) by their variables, which
    /// stand for a part of the expression's variable, not for a parameter of the request.
    var expressionParts: [String: FilterGrammar.Part] = [:]

    /// An endpoint at `request` with its bindings, sort and paging.
    public init(
        _ request: String, bind: [String: ParameterBinding] = [:], sort: SortBinding? = nil, paging: Paging? = nil,
        pagingFacts: PagingFacts = .init(), filters: [FilterGrammar] = [], records: String? = nil, single: Bool = false,
        keyOrdered: Bool = false
    ) {
        self.filters = filters
        self.keyOrdered = keyOrdered
        self.request = request
        self.bind = bind
        self.sort = sort
        self.paging = paging
        self.pagingFacts = pagingFacts
        self.records = records
        self.single = single
    }
}

/// What a template variable filters on: `{name}` ← `name BEGINSWITH[c] …`.
public struct ParameterBinding: Sendable, Hashable, Decodable {
    /// The comparison a variable serves.
    public enum Operation: String, Sendable, Hashable, CaseIterable, Decodable {
        /// `key == value`.
        case equal
        /// `key != value`. Pushed only where the key path cannot be nil: a backend's SQL `<>`
        /// leaves out the records without a value, which `!=` keeps.
        case notEqual
        /// The value is a prefix (`BEGINSWITH`).
        case beginsWith
        /// The value is a suffix (`ENDSWITH`).
        case endsWith
        /// The value is a substring (`CONTAINS`).
        case contains
        /// Values at least this (`>=`, `>`, the low end of `BETWEEN`).
        case atLeast
        /// Values at most this (`<=`, `<`, the high end of `BETWEEN`).
        case atMost
        /// Values above this (`>`).
        case greater
        /// Values below this (`<`).
        case less
        /// One of a comma-separated list (`IN`, or `==` one value).
        case oneOf
        /// None of a comma-separated list (`NOT … IN`, or `!=` one value); pushed only where the
        /// key path cannot be nil, as `notEqual`.
        case notOneOf
        /// A flag: `true` for `key == nil`, `false` for `key != nil` (django-filter's `isnull`).
        /// Bind it only where the backend reads the value, not just the parameter's presence.
        case isNull

        public init(from decoder: any Decoder) throws {
            self = try ConfigurationDecoding.enumCase(Self.self, from: decoder, what: "binding operation")
        }
    }

    /// Which letters a backend's case-insensitive match folds.
    public enum CaseFolding: String, Sendable, Hashable, CaseIterable, Decodable {
        /// Every letter, as Unicode lowercases them.
        case unicode
        /// ASCII letters only (SQLite's `LIKE`, behind many small backends): a `[c]` comparison
        /// is pushed only where its value is ASCII and holds no letter another folds to (`i`,
        /// `k`), so the backend's folding cannot change the answer; and it is taken as done
        /// exactly only without `%` and `_`, which an unescaped `LIKE` reads as wildcards.
        case ascii

        public init(from decoder: any Decoder) throws {
            self = try ConfigurationDecoding.enumCase(Self.self, from: decoder, what: "case folding")
        }
    }

    /// The key path filtered (`name`, `band.id`).
    public var keyPath: String
    /// The comparison it serves.
    public var operation: Operation
    /// The backend ignores case when it matches, so it also serves `[c]` comparisons.
    public var caseInsensitive: Bool
    /// Which letters the backend folds when it ignores case.
    public var caseFolding: CaseFolding
    /// The endpoint cannot be used without this variable (a search term). Path variables are
    /// always required.
    public var required: Bool

    /// A binding of `keyPath` by `operation`.
    public init(
        _ keyPath: String, _ operation: Operation = .equal, caseInsensitive: Bool = false,
        caseFolding: CaseFolding = .unicode, required: Bool = false
    ) {
        self.keyPath = keyPath
        self.operation = operation
        self.caseInsensitive = caseInsensitive
        self.caseFolding = caseFolding
        self.required = required
    }
}

/// A variable that orders results on the backend: a value for each sort written out
/// (`values`), or the backend's sort grammar declared once (`separator`, how a key is written
/// each way, `fields`), which orders by any number of keys and always ends with the key, so ties
/// come back in key order: Django's `-year,id`, PostgREST's `year.desc,id.asc`, OData's
/// `year desc,id`.
public struct SortBinding: Sendable, Hashable, Decodable {
    /// The template variable that takes the sort (`{ordering}`).
    public var variable: String
    /// Sort descriptors (`name`, `-year`, `-year,title`) → the value the backend takes. A value
    /// for a whole sort may end with the key (`-year,id`), the tie-break every fetch has.
    public var values: [String: String]
    /// With a grammar, what joins the keys of a sort (`,` for `-year,title,id`).
    public var separator: String?
    /// With a grammar, what marks a descending key (`-`), where `descending` is not given.
    public var descendingPrefix: String
    /// With a grammar, how an ascending key is written, `{field}` standing for its name there
    /// (`{field}`; PostgREST's `{field}.asc`).
    public var ascending: String
    /// With a grammar, how a descending key is written (`{field}.desc`, `{field} desc`); `nil`
    /// for `descendingPrefix` before the name.
    public var descending: String?
    /// With a grammar, each attribute the backend sorts by → its name there; attributes not
    /// listed are sorted in memory.
    public var fields: [String: String]
    /// Where the backend puts records without a value in the order it returns; `nil` when not
    /// declared. A sort of a key path that may be nil is taken for the fetch's order only where
    /// they come as a fetch has them, `smallest`.
    public var nils: NilOrder?
    /// The backend lists records that sort equal under a written-out value in ascending key
    /// order (a grammar, or a value ending with the key, says so by itself). Without it, a
    /// window's ends are read to the end of their group of equal records.
    public var tiesInKeyOrder: Bool

    /// A sort variable and the value it takes for each sort descriptor; with `separator`, the
    /// sort grammar over `fields` too, each key written as `ascending` or `descending` says;
    /// `nils` where the backend sorts records without a value.
    public init(
        variable: String, values: [String: String] = [:], separator: String? = nil, descendingPrefix: String = "-",
        ascending: String = "{field}", descending: String? = nil, fields: [String: String] = [:],
        tiesInKeyOrder: Bool = false, nils: NilOrder? = nil
    ) {
        self.variable = variable
        self.values = values
        self.separator = separator
        self.descendingPrefix = descendingPrefix
        self.ascending = ascending
        self.descending = descending
        self.fields = fields
        self.tiesInKeyOrder = tiesInKeyOrder
        self.nils = nils
    }
}

extension SortBinding {
    /// Where a backend sorts records without a value.
    public enum NilOrder: String, Sendable, Hashable, Decodable {
        /// Before every value ascending, after every value descending, as a fetch sorts them:
        /// SQLite, MySQL, and a grammar that says so itself (PostgREST's `.asc.nullsfirst`).
        case smallest
        /// After every value ascending, before every value descending: PostgreSQL and Oracle.
        case largest
    }
}

/// How an endpoint pages its results.
public enum Paging: Sendable, Hashable, Decodable {
    /// Page numbers: `{page}` from `first`, `{perPage}` of `size`; a next page's link
    /// (`PagingFacts.next`) is followed when present; a stated total or more-pages flag says
    /// where the listing ends, else a short page ends it.
    case pages(page: String, perPage: String, size: Int, first: Int)
    /// A cursor: the next page's is where `next` says (a field of the body, Datasette's `next`;
    /// or of the page's last record, Stripe's `starting_after`); `{cursor}` is empty at first.
    case cursor(variable: String, next: CursorPlace, limit: String?, size: Int)
    /// Offset and limit variables.
    case offset(offset: String, limit: String, size: Int)
    /// Follow the next page's link: the `Link` header's `rel="next"` URL, or where
    /// `PagingFacts.next` says.
    case link

    /// Where a cursor-paged endpoint's answer holds the cursor of the page after it.
    public enum CursorPlace: Sendable, Hashable, ExpressibleByStringLiteral {
        /// A JSON path in the body (`next`, `meta.next_cursor`): an opaque token the backend
        /// sends.
        case body(String)
        /// A field of the page's last record (`id`): the next page starts after that record
        /// (Stripe's `starting_after`, keyset paging).
        case lastRecord(String)

        /// A JSON path in the body.
        public init(stringLiteral path: String) { self = .body(path) }
    }

    /// Pages are asked for by position (a page number or an offset), so the one after a full
    /// page may be past the end of the listing.
    var pagesByPosition: Bool {
        switch self {
        case .pages, .offset: true
        case .cursor, .link: false
        }
    }

    /// Where no fact states the listing's end, a short page is taken for its last: pages asked
    /// for by position, and cursors read from the last record (an opaque cursor or a link says
    /// where the listing goes on by being there).
    var guessesEnd: Bool {
        switch self {
        case .pages, .offset, .cursor(_, .lastRecord, _, _): true
        case .cursor, .link: false
        }
    }
}
