import InMemoryTracing
import Tracing

/// One finished span, as the page shows it.
struct RecordedSpan: Sendable, Codable, Hashable {
    var id: String
    var parent: String?
    var trace: String
    var name: String
    var kind: String
    /// Nanoseconds since 1970.
    var start: UInt64
    var end: UInt64
    var attributes: [String: String]
    var failed: Bool

    init(_ span: FinishedInMemorySpan) {
        id = span.spanID
        parent = span.parentSpanID
        trace = span.traceID
        name = span.operationName
        kind = "\(span.kind)"
        start = span.startInstant.nanosecondsSinceEpoch
        end = span.endInstant.nanosecondsSinceEpoch
        var attributes: [String: String] = [:]
        // SpanAttributes is no Sequence: `forEach` is the only way through it.
        // swift-format-ignore: ReplaceForEachWithForLoop
        span.attributes.forEach { key, value in attributes[key] = Self.text(value) }
        self.attributes = attributes
        failed = span.status?.code == .error || !span.errors.isEmpty
    }

    private static func text(_ attribute: SpanAttribute) -> String {
        switch attribute {
        case .int32(let value): String(value)
        case .int64(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        case .string(let value): value
        case .stringConvertible(let value): value.description
        default: "\(attribute)"
        }
    }
}
