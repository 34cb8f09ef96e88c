/// How `ChangeFeedHandler` follows the backend's change feed.
public struct ChangeFeedOptions: Sendable, Hashable {
    /// How long the backend may hold a request open until a change arrives (a long poll);
    /// `nil` asks for an answer at once.
    public var wait: Duration?
    /// The least time from one request to the next, so a backend that answers at once is
    /// polled at this interval, not in a busy loop.
    public var interval: Duration
    /// The wait before asking again after a failure; it doubles with each failure in a row.
    public var retryBaseDelay: Duration
    /// The longest wait before asking again after failures.
    public var retryMaxDelay: Duration
    /// A file that keeps the position the feed reached, so a process that starts again (over a
    /// disk cache that outlived it) resumes from there and learns what changed while it was
    /// stopped; `nil`: each start begins at the feed's current position.
    public var cursorFile: String?
    /// How long the feed may fail to answer before what the caches hold counts as out of date:
    /// they keep it but make it stale (revalidated before use, served stale only where allowed),
    /// and every observation refetches. `nil`: cached data stays fresh for its own lifetime
    /// however long the feed is down.
    public var maxOutage: Duration?
    /// After a start from `cursorFile`, how long reads wait for the feed to tell what changed
    /// while the process was stopped. Past it, or when the feed fails to answer, what the caches
    /// hold is made stale (revalidated before use, served stale only where allowed, and marked
    /// so), never answered as current.
    public var catchUpWait: Duration

    /// Options with the given waits and delays; each has the default the pipeline reference names.
    public init(
        wait: Duration? = .seconds(25), interval: Duration = .seconds(1), retryBaseDelay: Duration = .seconds(1),
        retryMaxDelay: Duration = .seconds(60), cursorFile: String? = nil, maxOutage: Duration? = nil,
        catchUpWait: Duration = .seconds(2)
    ) {
        self.catchUpWait = catchUpWait
        self.cursorFile = cursorFile
        self.maxOutage = maxOutage
        self.wait = wait
        self.interval = interval
        self.retryBaseDelay = retryBaseDelay
        self.retryMaxDelay = max(retryBaseDelay, retryMaxDelay)
    }
}

extension ChangeFeedOptions: Decodable {
    private enum CodingKeys: String, CodingKey {
        case wait, interval, retryBaseDelay, retryMaxDelay, cursorFile, maxOutage, catchUpWait
    }

    /// Reads `{ wait: 25s, interval: 1s, retry-base-delay: 1s, retry-max-delay: 60s, cursor-file:
    /// cache/feed.cursor, max-outage: 5m, catch-up-wait: 2s }` (`wait: 0s` asks for answers at once); a key left out
    /// keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ChangeFeedOptions()
        let wait = try container.decodeIfPresent(TimeSpan.self, forKey: .wait)?.duration ?? defaults.wait
        self.init(
            wait: wait == .zero ? nil : wait,
            interval: try container.decodeIfPresent(TimeSpan.self, forKey: .interval)?.duration ?? defaults.interval,
            retryBaseDelay: try container.decodeIfPresent(TimeSpan.self, forKey: .retryBaseDelay)?.duration
                ?? defaults.retryBaseDelay,
            retryMaxDelay: try container.decodeIfPresent(TimeSpan.self, forKey: .retryMaxDelay)?.duration
                ?? defaults.retryMaxDelay,
            cursorFile: try container.decodeIfPresent(String.self, forKey: .cursorFile),
            maxOutage: try container.decodeIfPresent(TimeSpan.self, forKey: .maxOutage)?.duration,
            catchUpWait: try container.decodeIfPresent(TimeSpan.self, forKey: .catchUpWait)?.duration
                ?? defaults.catchUpWait)
    }
}
