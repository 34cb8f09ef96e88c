/// Reads a `text/event-stream` body (server-sent events) the way the WHATWG HTML standard's
/// event stream interpretation does (§9.2.6), fed bytes as they arrive:
///
/// - lines end in CRLF, LF or CR (also when a CRLF is split between two reads); a leading
///   byte order mark is dropped;
/// - `: text` is a comment (a keep-alive) and is ignored;
/// - `field: value` (one leading space of the value dropped), or `field` alone with an empty
///   value; the fields are `event` (the type), `data` (lines joined with LF), `id` (ignored when
///   it holds U+0000) and `retry` (ASCII digits only: the reconnection time in milliseconds);
///   other fields are ignored;
/// - a blank line dispatches the event: the last event ID is set (even when nothing is
///   dispatched), and an event with data is dispatched with type `message` unless `event` named
///   another;
/// - an event whose blank line has not arrived is not dispatched.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = parser.consume(Array("id: 7\ndata: {\"id\": 1}\n\n".utf8))
/// // events[0].data == #"{"id": 1}"#, parser.lastEventID == "7"
/// ```
public struct ServerSentEventParser: Sendable {
    /// One dispatched event.
    public struct Event: Sendable, Hashable {
        /// `message` unless the event named another type.
        public var type: String
        /// The `data` lines, joined with LF.
        public var data: String
        /// The last event ID when the event was dispatched (`nil` before any `id` field).
        public var id: String?
        /// The line of the stream the event starts on, from 1, for error messages.
        public var line: Int

        /// An event of `type` with `data`, the last event ID then, and the line it starts on.
        public init(type: String = "message", data: String, id: String? = nil, line: Int) {
            self.type = type
            self.data = data
            self.id = id
            self.line = line
        }
    }

    /// The last event ID as of the last blank line: where a reconnection resumes from
    /// (`Last-Event-ID`). `nil` while the stream has set none.
    public private(set) var lastEventID: String?
    /// The reconnection time the stream asked for with `retry`, if any.
    public private(set) var reconnectionTime: Duration?
    /// Lines read so far.
    public private(set) var lines = 0

    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var data: String?
    private var type = ""
    private var idBuffer: String?
    private var eventStart: Int?

    /// A parser at the start of a stream.
    public init() {}

    /// Reads `bytes`, the next part of the stream, and returns the events they complete.
    public mutating func consume(_ bytes: some Collection<UInt8>) -> [Event] {
        if let events = bytes.withContiguousStorageIfAvailable({ consume(buffer: $0) }) { return events }
        return Array(bytes).withUnsafeBufferPointer { consume(buffer: $0) }
    }

    /// Finds each line end and takes the bytes before it at once (a stream is mostly long
    /// `data` lines; taking them byte by byte cost most of the time of a burst).
    private mutating func consume(buffer: UnsafeBufferPointer<UInt8>) -> [Event] {
        var dispatched: [Event] = []
        var start = 0
        var index = 0
        while index < buffer.count {
            let byte = buffer[index]
            guard byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") else {
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\n"), afterCarriageReturn, index == start, line.isEmpty {
                // The LF of a CRLF whose CR ended the line before.
                afterCarriageReturn = false
            } else {
                line.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
                afterCarriageReturn = byte == UInt8(ascii: "\r")
                if let event = endLine() { dispatched.append(event) }
            }
            index += 1
            start = index
        }
        if start < buffer.count {
            afterCarriageReturn = false
            line.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
        return dispatched
    }

    /// Handles the line read so far; the event it dispatches, if it is a blank line.
    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        lines += 1
        if lines == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        guard !line.isEmpty else { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        if eventStart == nil { eventStart = lines }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let field = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        let text = String(decoding: value, as: UTF8.self)
        switch field {
        case "event": type = text
        case "data": data = (data.map { $0 + "\n" } ?? "") + text
        case "id" where !value.contains(0): idBuffer = text
        case "retry" where !value.isEmpty && value.allSatisfy({ (0x30...0x39).contains($0) }):
            if let milliseconds = Int(text) { reconnectionTime = .milliseconds(milliseconds) }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> Event? {
        defer {
            data = nil
            type = ""
            eventStart = nil
        }
        lastEventID = idBuffer
        guard let data else { return nil }
        return Event(type: type.isEmpty ? "message" : type, data: data, id: idBuffer, line: eventStart ?? lines)
    }
}
