import Logging
import StoreChain

/// A log handler that keeps every line, for checking what was logged (and what was not).
///
/// ```swift
/// let log = CapturedLog()
/// let chain = Chain(handlers: [LoggingHandler()], terminal: store, logger: log.logger())
/// #expect(!log.text.contains(token))
/// ```
public final class CapturedLog: Sendable {
    private let lines = Locked<[(Logger.Level, String)]>([])

    /// An empty log.
    public init() {}

    /// Every line logged so far, with its level.
    public var entries: [(level: Logger.Level, message: String)] { lines.withLock { $0 } }

    /// Every line logged so far, with its metadata, one per line.
    public var text: String { entries.map(\.message).joined(separator: "\n") }

    /// A logger writing here, at every level.
    public func logger(label: String = "test") -> Logger {
        Logger(label: label) { _ in Handler(log: self) }
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            let suffix =
                all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
            log.lines.withLock { $0.append((event.level, "\(event.message)\(suffix)")) }
        }
    }
}
