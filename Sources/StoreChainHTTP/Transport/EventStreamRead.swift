/// How a transport reads a `text/event-stream` body (server-sent events) as one exchange: from
/// the head until the stream ends, `wait` passes, or the stream has said something (an event,
/// or an `id` that says where it stands) and then either no more bytes come for `quiet` or the
/// body has reached `maxBytes`. What has arrived by then is
/// the response's body, ending with the last event complete when it was cut; a connection
/// that drops after complete events answers with what arrived, so the next request resumes
/// from the last event (`Last-Event-ID`) and nothing is lost or repeated.
public struct EventStreamRead: Sendable, Hashable {
    /// The longest the stream is read; with no event by then, the body holds what did arrive
    /// (comments, an `id` that says where the stream stands).
    public var wait: Duration
    /// Once the stream has said something, the read ends when no more bytes come for this long.
    public var quiet: Duration
    /// Once the stream has said something, the read ends when the body reaches this size, so a
    /// burst is read a bounded part at a time.
    public var maxBytes: Int
    /// Hand the body on as it arrives (`TransportResponse.bodyStream`) for as long as the
    /// connection lasts, instead of ending the read by the rules above. A transport that cannot
    /// reads by the rules (the change feed then asks again after each read).
    public var held: Bool

    /// A read that waits up to `wait` for the stream to say something, then ends after `quiet`
    /// without bytes or at `maxBytes`; or, `held`, one that hands the body on as it arrives.
    public init(wait: Duration, quiet: Duration = .milliseconds(20), maxBytes: Int = 1 << 20, held: Bool = false) {
        self.wait = wait
        self.quiet = quiet
        self.maxBytes = maxBytes
        self.held = held
    }
}
