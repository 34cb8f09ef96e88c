import StoreChain

/// Where an outbox keeps its saves and how it retries them.
///
/// Pipeline files write it as the handler's options:
/// `outbox: { path: outbox.sqlite, retry-delay: 2s, max-retry-delay: 5m, coalesce-updates: true,
/// conflict-policy: merge, parallel-replay: 4, acknowledge-after: 2s }`.
public struct OutboxOptions: Sendable, Hashable, Decodable {
    /// The SQLite file (created owner-only, with its directory).
    public var path: String
    /// How long the outbox waits before sending again after the backend could not be reached;
    /// it doubles after each further failure.
    public var retryDelay: Duration
    /// The longest wait between attempts.
    public var maxRetryDelay: Duration
    /// Whether waiting updates that only change objects an update before them already changes
    /// are sent together with it, as one request, when the outbox replays (the end state is
    /// the same; a combined request the backend refuses is sent again one save at a time).
    public var coalescesUpdates: Bool
    /// What happens to a replayed update the backend refuses because someone else changed the
    /// object first (412 or 409).
    public var conflictPolicy: ConflictPolicy
    /// How many independent lanes of waiting saves replay at once (at least 1). Saves that
    /// depend on each other (a common object, or a delete and the entities it may reach) are
    /// always in one lane, in the order made; 1 sends every save in the order made.
    public var parallelReplay: Int
    /// How long a save waits for a backend that is slow to answer before it is acknowledged as
    /// pending; the exchange goes on and its outcome is recorded when it ends (sent, kept for
    /// another attempt, or refused). A backend out of reach is known at once and waits nothing.
    public var acknowledgeAfter: Duration

    /// Options for the outbox file at `path`; each other option has the default the pipeline
    /// reference names.
    public init(
        path: String, retryDelay: Duration = .seconds(2), maxRetryDelay: Duration = .seconds(300),
        coalescesUpdates: Bool = true, conflictPolicy: ConflictPolicy = .merge, parallelReplay: Int = 4,
        acknowledgeAfter: Duration = .seconds(2)
    ) {
        self.path = path
        self.retryDelay = retryDelay
        self.maxRetryDelay = max(retryDelay, maxRetryDelay)
        self.coalescesUpdates = coalescesUpdates
        self.conflictPolicy = conflictPolicy
        self.parallelReplay = max(1, parallelReplay)
        self.acknowledgeAfter = max(.zero, acknowledgeAfter)
    }

    private enum CodingKeys: String, CodingKey {
        case path, retryDelay, maxRetryDelay
        case coalescesUpdates = "coalesceUpdates"
        case conflictPolicy, parallelReplay, acknowledgeAfter
    }

    /// Reads `path` (required), `retry-delay`, `max-retry-delay`, `coalesce-updates`,
    /// `conflict-policy`, `parallel-replay` and `acknowledge-after`; a key left out keeps the
    /// default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = OutboxOptions(path: try container.decode(String.self, forKey: .path))
        self.init(
            path: defaults.path,
            retryDelay: try container.decodeIfPresent(TimeSpan.self, forKey: .retryDelay)?.duration
                ?? defaults.retryDelay,
            maxRetryDelay: try container.decodeIfPresent(TimeSpan.self, forKey: .maxRetryDelay)?.duration
                ?? defaults.maxRetryDelay,
            coalescesUpdates: try container.decodeIfPresent(Bool.self, forKey: .coalescesUpdates)
                ?? defaults.coalescesUpdates,
            conflictPolicy: try container.decodeIfPresent(String.self, forKey: .conflictPolicy).map(
                ConflictPolicy.init) ?? defaults.conflictPolicy,
            parallelReplay: try container.decodeIfPresent(PositiveCount.self, forKey: .parallelReplay)?.value
                ?? defaults.parallelReplay,
            acknowledgeAfter: try container.decodeIfPresent(TimeSpan.self, forKey: .acknowledgeAfter)?.duration
                ?? defaults.acknowledgeAfter)
    }

    /// The wait before the next attempt after `failures` failures in a row.
    func delay(afterFailures failures: Int) -> Duration {
        var delay = retryDelay
        for _ in 1..<max(1, min(failures, 32)) where delay < maxRetryDelay { delay *= 2 }
        return min(delay, maxRetryDelay)
    }
}
