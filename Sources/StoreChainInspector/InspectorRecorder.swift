import Foundation
import InMemoryTracing
import StoreChain
import Tracing

/// The spans a chain produces, kept for the inspector: give its `tracer` to the chain, and the
/// inspector reads what the chain did from it (no second bookkeeping). Keeps the last
/// `capacity` finished spans.
///
/// ```swift
/// let recorder = InspectorRecorder()
/// let chain = Chain(handlers: handlers, terminal: remote, tracing: ChainTracing(tracer: recorder.tracer))
/// ```
public final class InspectorRecorder: Sendable {
    /// The tracer to give the chain.
    public let tracer = InMemoryTracer(recordInjections: false, recordExtractions: false)
    private let capacity: Int
    /// The kept spans, oldest first, and how many were ever kept (the sequence number after
    /// the last).
    private let kept = Locked<(spans: [RecordedSpan], total: Int)>(([], 0))

    public init(capacity: Int = 5_000) {
        self.capacity = capacity
    }

    /// Moves the spans finished since the last call into the kept ones.
    private func collect() {
        let new = tracer.popFinishedSpans().map(RecordedSpan.init)
        guard !new.isEmpty else { return }
        kept.withLock { kept in
            kept.spans.append(contentsOf: new)
            kept.total += new.count
            if kept.spans.count > capacity { kept.spans.removeFirst(kept.spans.count - capacity) }
        }
    }

    /// The root spans (whole requests) finished after the first `seen` spans ever kept, and
    /// how many have been kept now: for following the chain as it works.
    func roots(after seen: Int) -> (roots: [RecordedSpan], seen: Int) {
        collect()
        return kept.withLock { kept in
            let new = kept.spans.suffix(min(kept.spans.count, max(0, kept.total - seen)))
            return (new.filter { $0.parent == nil }, kept.total)
        }
    }

    /// Every kept span of the trace `id`, in start order.
    func trace(_ id: String) -> [RecordedSpan] {
        collect()
        return kept.withLock { $0.spans.filter { $0.trace == id } }.sorted { $0.start < $1.start }
    }

    /// The last `count` traces that began with a request through the chain, newest first: each
    /// its spans in start order.
    func recentTraces(_ count: Int) -> [[RecordedSpan]] {
        collect()
        let spans = kept.withLock { $0.spans }
        var byTrace: [String: [RecordedSpan]] = [:]
        for span in spans { byTrace[span.trace, default: []].append(span) }
        return byTrace.values
            .filter { trace in trace.contains { $0.parent == nil } }
            .map { $0.sorted { $0.start < $1.start } }
            .sorted { ($0.first?.start ?? 0) > ($1.first?.start ?? 0) }
            .prefix(count).map { $0 }
    }
}

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
