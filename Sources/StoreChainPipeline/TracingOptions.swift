import StoreChain
import Tracing

/// A pipeline file's `tracing:` key: `tracing: { enabled: true, redact-values: false }`.
///
/// Without it, a chain made from the file traces when a tracer is bootstrapped in
/// `InstrumentationSystem` (or one is passed to `makeChain`), with predicate values redacted.
public struct TracingOptions: Sendable, Hashable, Decodable {
    /// `false` turns tracing off whatever tracer there is; `true` or `nil` trace with the
    /// tracer there is, and not at all when there is none.
    public var enabled: Bool?
    /// Whether a span's predicate shows `?` for each value (`name BEGINSWITH[c] ?`).
    public var redactValues: Bool

    /// Options as a file gives them: tracing on when a tracer is there, values redacted.
    public init(enabled: Bool? = nil, redactValues: Bool = true) {
        self.enabled = enabled
        self.redactValues = redactValues
    }

    private enum CodingKeys: String, CodingKey {
        case enabled
        case redactValues
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled)
        redactValues = try container.decodeIfPresent(Bool.self, forKey: .redactValues) ?? true
    }

    /// How a chain traces with these options and `tracer` (the bootstrapped one when `nil`).
    func chainTracing(_ tracer: (any Tracer)?) -> ChainTracing? {
        guard enabled != false else { return nil }
        guard let tracer else { return .bootstrapped(redactsValues: redactValues) }
        return ChainTracing(tracer: tracer, redactsValues: redactValues)
    }
}
