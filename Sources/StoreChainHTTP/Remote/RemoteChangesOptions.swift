import StoreChain

/// Where the backend's change feed is and how its answers read (a changes-since endpoint):
///
/// ```yaml
/// changes:
///   request: GET /changes?since={cursor}&wait={wait}
///   changes: changes          # the list of changes in the body
///   cursor: cursor            # where to ask from next
///   entity: type              # each change's entity, as the backend names it
///   entity-names: { album: Album, band: Band }
///   key: id
///   operation: op             # insert, update or delete (create, upsert, remove… too)
///   record: record            # the object's new state, mapped like fetched records
///   gap-statuses: [409, 410]  # "cannot answer from that cursor"
/// ```
///
/// `{cursor}` is left out when asking for the current position; `{wait}` is the long poll's
/// wait in whole seconds.
///
/// Or a stream of server-sent events (`text/event-stream`), each event's `data` one change
/// read by the same fields (the operation may be the event's type instead):
///
/// ```yaml
/// changes:
///   request: GET /events
///   format: event-stream      # Last-Event-ID carries the cursor
///   entity: type
///   operation: op
///   gap-events: [gap]         # an event type that means "cannot resume from that id"
///   heartbeat-timeout: 45s    # silent this long (no event, no comment): a drop
/// ```
public struct RemoteChangesOptions: Sendable, Hashable {
    /// How the feed answers.
    public enum Format: String, Sendable, Hashable, CaseIterable, Decodable {
        /// A JSON body with the list of changes and the next cursor (a changes-since endpoint).
        case json
        /// Server-sent events: each event's data is one change, the last event ID is the cursor
        /// (sent back as `Last-Event-ID`). The stream is held open, one connection for as long
        /// as it is healthy, each event handed on as it arrives (`ChangesRequest.stream`); a
        /// stream silent for `heartbeatTimeout` is taken for a drop. Asked for without a stream
        /// (a feed catching up after a restart), it is read until its events stop for `quiet`.
        case eventStream = "event-stream"

        public init(from decoder: any Decoder) throws {
            self = try ConfigurationDecoding.enumCase(Self.self, from: decoder, what: "change feed format")
        }
    }

    /// The request that asks for changes: `GET /changes?since={cursor}&wait={wait}`.
    public var request: String
    /// How the backend answers: a JSON body, or an event stream.
    public var format: Format
    /// Where the list of changes sits in the body.
    public var changes: String
    /// Where the next cursor sits in the body.
    public var cursor: String
    /// The field of a change naming its entity.
    public var entity: String
    /// The backend's entity names → the model's; a name not listed matches a model entity of
    /// that name, ignoring case.
    public var entityNames: [String: String]
    /// The field of a change holding the object's key.
    public var key: String
    /// The field of a change saying what happened.
    public var operation: String
    /// The field of a change holding the object's new state, if the feed sends it.
    public var record: String?
    /// Statuses that mean the backend cannot answer from the cursor asked (a gap).
    public var gapStatuses: Set<Int>
    /// Event types (an event stream's) that mean the backend cannot resume from the id asked: a
    /// gap, going on from that event's id.
    public var gapEvents: Set<String>
    /// Event types (an event stream's) that carry no change, such as keep-alives with data.
    public var ignoredEvents: Set<String>
    /// How long an event stream may stay silent after an event before the answer ends, when
    /// it is read as one answer (not held open).
    public var quiet: Duration
    /// How long an event stream held open may say nothing (no event, no comment) before it is
    /// taken for a drop and resumed: above the backend's keep-alive interval.
    public var heartbeatTimeout: Duration

    /// A change feed at `request`, its answers read with the given field names (the pipeline
    /// reference names each default).
    public init(
        request: String, format: Format = .json, changes: String = "changes", cursor: String = "cursor",
        entity: String = "entity", entityNames: [String: String] = [:], key: String = "id",
        operation: String = "operation", record: String? = "record", gapStatuses: Set<Int> = [409, 410],
        gapEvents: Set<String> = [], ignoredEvents: Set<String> = ["ping", "heartbeat", "keep-alive"],
        quiet: Duration = .milliseconds(20), heartbeatTimeout: Duration = .seconds(45)
    ) {
        self.request = request
        self.format = format
        self.gapEvents = gapEvents
        self.ignoredEvents = ignoredEvents
        self.quiet = quiet
        self.heartbeatTimeout = heartbeatTimeout
        self.changes = changes
        self.cursor = cursor
        self.entity = entity
        self.entityNames = entityNames
        self.key = key
        self.operation = operation
        self.record = record
        self.gapStatuses = gapStatuses
    }

    /// What a change's operation field means; `nil` for a value no backend uses.
    static func operation(_ text: String) -> FeedChange.Operation? {
        switch text.lowercased() {
        case "insert", "inserted", "create", "created", "add", "added", "post": .insert
        case "update", "updated", "upsert", "change", "changed", "modify", "modified", "patch", "put": .update
        case "delete", "deleted", "remove", "removed", "destroy", "destroyed": .delete
        default: nil
        }
    }
}

extension RemoteChangesOptions: Decodable {
    private enum Keys: String, CodingKey {
        case request, format, changes, cursor, entity, entityNames, key, operation, record, gapStatuses, gapEvents
        case ignoredEvents, quiet, heartbeatTimeout
    }

    /// Reads the `changes` section (only `request` required); a key left out keeps the default
    /// of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let defaults = RemoteChangesOptions(request: try container.decode(String.self, forKey: .request))
        self.init(
            request: defaults.request,
            format: try container.decodeIfPresent(Format.self, forKey: .format) ?? defaults.format,
            changes: try container.decodeIfPresent(String.self, forKey: .changes) ?? defaults.changes,
            cursor: try container.decodeIfPresent(String.self, forKey: .cursor) ?? defaults.cursor,
            entity: try container.decodeIfPresent(String.self, forKey: .entity) ?? defaults.entity,
            entityNames: try container.decodeIfPresent([String: String].self, forKey: .entityNames)
                ?? defaults.entityNames,
            key: try container.decodeIfPresent(String.self, forKey: .key) ?? defaults.key,
            operation: try container.decodeIfPresent(String.self, forKey: .operation) ?? defaults.operation,
            record: try container.decodeIfPresent(String.self, forKey: .record) ?? defaults.record,
            gapStatuses: Set(try container.decodeIfPresent([Int].self, forKey: .gapStatuses) ?? [409, 410]),
            gapEvents: Set(try container.decodeIfPresent([String].self, forKey: .gapEvents) ?? []),
            ignoredEvents: try container.decodeIfPresent([String].self, forKey: .ignoredEvents).map(Set.init)
                ?? defaults.ignoredEvents,
            quiet: try container.decodeIfPresent(TimeSpan.self, forKey: .quiet)?.duration ?? defaults.quiet,
            heartbeatTimeout: try container.decodeIfPresent(TimeSpan.self, forKey: .heartbeatTimeout)?.duration
                ?? defaults.heartbeatTimeout)
    }
}
