/// The error every StoreChain API throws: what went wrong, where, and what to do about it.
///
/// `code` is an open set (new codes can be added without breaking `switch`es); `location`
/// says where the problem is (file, line, column, key path, JSON path or character offset);
/// `suggestion` says what to do.
///
/// ```swift
/// do { try request.validate(against: model) }
/// catch let error as StoreChainError where error.code == .unknownKeyPath { print(error) }
/// ```
public struct StoreChainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name (`rate-limited`), as logs and messages print it.
        public let name: String
        /// The code called `name`; define new codes as `static let`s of an extension.
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A model file or model definition is invalid.
        public static let invalidModel = Code("invalid-model")
        /// A file could not be read or parsed at all.
        public static let unreadableFile = Code("unreadable-file")
        /// JSON text is malformed.
        public static let malformedJSON = Code("malformed-json")
        /// A predicate's text could not be parsed.
        public static let predicateSyntax = Code("predicate-syntax")
        /// A request names an entity the model does not have.
        public static let unknownEntity = Code("unknown-entity")
        /// A request names a key path the entity does not have.
        public static let unknownKeyPath = Code("unknown-key-path")
        /// Values of incompatible types are compared, or a value has the wrong type.
        public static let typeMismatch = Code("type-mismatch")
        /// A request is well-formed but cannot be answered as asked.
        public static let invalidRequest = Code("invalid-request")
        /// A value in a data file cannot be converted to its attribute's type.
        public static let invalidData = Code("invalid-data")
        /// A handler or terminal answered with the wrong kind of response.
        public static let invalidResponse = Code("invalid-response")
        /// A save was rejected; the message names the object and why.
        public static let saveFailed = Code("save-failed")
        /// The backend refused a request for good: a status no other code covers (HTTP 400, 401,
        /// 403, 404, 422…). Trying again will not help; the suggestion says what to check.
        public static let httpStatus = Code("http-status")
        /// The backend refused a save because the object changed since the version it was based
        /// on (HTTP 409, or 412 to `If-Match`): read it again, reapply the change, save again.
        public static let conflict = Code("conflict")
        /// The backend could not answer now (a server error, a gateway or service unavailable, a
        /// request timeout: HTTP 408 and 5xx); trying again later may succeed, after `retryAfter`
        /// when it said so.
        public static let backendUnavailable = Code("backend-unavailable")
        /// A request could not be sent or its answer not received (refused, reset, too large).
        public static let transport = Code("transport")
        /// No endpoint of the backend can serve a request.
        public static let noEndpoint = Code("no-endpoint")
        /// A record from a backend cannot be mapped to the model.
        public static let badRecord = Code("bad-record")
        /// A request's deadline passed before it was answered.
        public static let timedOut = Code("timed-out")
        /// An object, or the store, no longer exists or is shut down.
        public static let unavailable = Code("unavailable")
        /// A request with the cache-only policy found nothing cached to answer it.
        public static let notCached = Code("not-cached")
        /// The backend cannot be reached, and no cache holds a copy of what was asked to stand
        /// in (`underlying` is the transport's error).
        public static let offlineNotCached = Code("offline-not-cached")
        /// A rate limit stops the request (a rate-limit handler's, or the backend's: HTTP 429);
        /// `retryAfter` says when to try again.
        public static let rateLimited = Code("rate-limited")
        /// A cache file could not be opened, read or written.
        public static let cacheFile = Code("cache-file")
        /// A pipeline file is invalid: an unknown handler or option, a wrong value, an order
        /// that cannot work.
        public static let invalidPipeline = Code("invalid-pipeline")
        /// A fetch needs more backend pages than the pagination options allow.
        public static let tooManyPages = Code("too-many-pages")
        /// A local store's file could not be opened, read or written. Unlike a cache file it is
        /// never rebuilt, since it holds the only copy of its data.
        public static let storeFile = Code("store-file")
        /// An answer would have been computed over related objects that were not loaded (the
        /// album a sort by `album.year` reads). Never answered silently wrong; a defect in the
        /// handler or terminal that answered.
        public static let incompleteData = Code("incomplete-data")
        /// A database server that holds state shared between processes (a PostgreSQL cache or
        /// rate limit) cannot be reached or refused a statement; requests go on without it.
        public static let sharedState = Code("shared-state")
        /// A Foundation `#Predicate` or `SortDescriptor` has a part the predicate language cannot
        /// express.
        public static let unsupportedPredicate = Code("unsupported-predicate")
    }

    /// Where a problem is. Every field is optional; the description prints those present.
    public struct Location: Hashable, Sendable, CustomStringConvertible {
        /// The file, as given to the call that read it.
        public var file: String?
        /// The line, from 1.
        public var line: Int?
        /// The column, from 1.
        public var column: Int?
        /// A key path (`entities.Band.attributes.name`) or JSON path (`$.Band[3].founded`).
        public var path: String?
        /// A character offset into a single-line text such as a predicate.
        public var offset: Int?

        /// A location made of whichever parts are known.
        public init(
            file: String? = nil, line: Int? = nil, column: Int? = nil, path: String? = nil,
            offset: Int? = nil
        ) {
            self.file = file
            self.line = line
            self.column = column
            self.path = path
            self.offset = offset
        }

        public var description: String {
            var parts: [String] = []
            if let file {
                var place = file
                if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
                parts.append(place)
            } else if let line {
                parts.append("line \(line)" + (column.map { ", column \($0)" } ?? ""))
            }
            if let path { parts.append(path) }
            if let offset { parts.append("offset \(offset)") }
            return parts.joined(separator: ": ")
        }
    }

    /// What kind of problem this is; match on it (`catch StoreChainError.rateLimited`).
    public var code: Code
    /// One sentence saying what is wrong.
    public var message: String
    /// Where the problem is, if it is in a file, a key path or a text.
    public var location: Location?
    /// What to do about it, if we can tell.
    public var suggestion: String?
    /// The error that caused this one, if any, as it was thrown (a `DatabaseError`, a
    /// transport's error, a YAML parser's), for code that inspects it.
    public var underlying: (any Error)?
    /// More about what went wrong, in words (`body starts: {"error": …}`); the description shows
    /// it in place of the underlying error's own text.
    public var detail: String?
    /// The status the backend answered with, for messages and logs. What an error means is its
    /// `code` (`conflict`, `backendUnavailable`, `rateLimited`, `httpStatus`), which the HTTP
    /// module derives from the status once; nothing else reads this number.
    public var status: Int?
    /// How long to wait before trying again, when the backend or a rate limit said so.
    public var retryAfter: Duration?
    /// How many times the failed call was tried, when something already retried it.
    public var attempts: Int?

    /// An error of `code` saying `message`, with where it is and what to do when known.
    public init(
        _ code: Code, _ message: String, at location: Location? = nil, suggestion: String? = nil,
        underlying: (any Error)? = nil, detail: String? = nil
    ) {
        self.code = code
        self.message = message
        self.location = location
        self.suggestion = suggestion
        self.underlying = underlying
        self.detail = detail
    }

    public var description: String {
        var text = ""
        if let location, !location.description.isEmpty { text = "\(location): " }
        text += message
        if let cause = detail ?? underlying.map({ "\($0)" }) { text += " (\(cause))" }
        if let suggestion { text += " — \(suggestion)" }
        return text
    }
}

extension StoreChainError {
    /// The `not-cached` answer to a cache-only `request` that nothing holding answers could
    /// answer (the chain gives it below the last cache; a terminal that would ask the backend
    /// gives it when called on its own).
    public static func refusingCacheOnly(_ request: StoreRequest) -> StoreChainError {
        StoreChainError(
            .notCached, "\(request) is not cached, and the cache-only policy forbids asking the backend",
            suggestion: "fetch it once while the backend is reachable, or use another cache policy")
    }
}

extension StoreChainError {
    /// Equal when everything is, the underlying errors compared by their descriptions (an
    /// `any Error` has no equality of its own).
    public static func == (lhs: StoreChainError, rhs: StoreChainError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.location == rhs.location
            && lhs.suggestion == rhs.suggestion && lhs.detail == rhs.detail && lhs.status == rhs.status
            && lhs.retryAfter == rhs.retryAfter && lhs.attempts == rhs.attempts
            && lhs.underlying.map { "\($0)" } == rhs.underlying.map { "\($0)" }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(location)
        hasher.combine(detail)
        hasher.combine(status)
    }

    /// Whether the backend refused a save because the object changed since the version it
    /// was based on (`conflict`).
    public var isConflict: Bool { code == .conflict }

    /// Whether trying again later may succeed: the backend out of reach (`transport`, or
    /// `offlineNotCached` from a cache), a deadline passed (`timedOut`), a rate limit
    /// (`rateLimited`), the backend failing for now (`backendUnavailable`). Stale-if-error,
    /// retries and the outbox apply to these only.
    public var isTransient: Bool {
        code == .transport || code == .timedOut || code == .rateLimited || code == .backendUnavailable
            || code == .offlineNotCached
    }

    /// Returns a copy whose location is filled in where this one says nothing.
    package func located(_ outer: Location) -> StoreChainError {
        var copy = self
        var location = copy.location ?? Location()
        location.file = location.file ?? outer.file
        location.line = location.line ?? outer.line
        location.column = location.column ?? outer.column
        location.path = location.path ?? outer.path
        location.offset = location.offset ?? outer.offset
        copy.location = location
        return copy
    }
}
