import StoreChainHTTP
import Testing

/// The event stream interpretation of the WHATWG HTML standard (§9.2.6), case by case.
@Suite struct ServerSentEventParserTests {
    func events(_ text: String) -> (events: [ServerSentEventParser.Event], parser: ServerSentEventParser) {
        var parser = ServerSentEventParser()
        return (parser.consume(Array(text.utf8)), parser)
    }

    @Test func dataLinesJoinWithLineFeedsAndABlankLineDispatches() {
        let (events, parser) = events("event: add\ndata: one\ndata:two\nid: 7\n\ndata: three\n\n")
        #expect(
            events == [
                .init(type: "add", data: "one\ntwo", id: "7", line: 1),
                .init(type: "message", data: "three", id: "7", line: 6),
            ])
        #expect(parser.lastEventID == "7", "the last event ID carries over to later events")
    }

    @Test func everyLineEndingCountsAlsoWhenACarriageReturnLineFeedIsSplit() {
        var parser = ServerSentEventParser()
        var events = parser.consume(Array("data: a\r\n\r\ndata: b\r\rdata: c\r".utf8))
        events += parser.consume(Array("\n\r\n".utf8))
        #expect(events.map(\.data) == ["a", "b", "c"])
        #expect(parser.lines == 6, "the LF after a split CR ends no second line")
    }

    @Test func commentsAndUnknownFieldsAreIgnoredAndOnlyOneSpaceIsDropped() {
        let (events, _) = events(": keep-alive\nfoo: bar\ndata:  two spaces\n\n: another\n\n")
        #expect(events == [.init(data: " two spaces", line: 2)])
    }

    @Test func aFieldWithoutAColonHasAnEmptyValue() {
        let (events, parser) = events("data\n\nid\n\n")
        #expect(events == [.init(data: "", line: 1)], "an empty data field still dispatches")
        #expect(parser.lastEventID == "", "an empty id resets the last event ID")
    }

    @Test func anEventWithoutDataIsNotDispatchedButItsIdCounts() {
        let (events, parser) = events("id: k-12\nevent: position\n\n")
        #expect(events.isEmpty)
        #expect(parser.lastEventID == "k-12")
    }

    @Test func anEventCutBeforeItsBlankLineIsNotDispatchedAndItsIdDoesNotCount() {
        let (events, parser) = events("id: 1\ndata: whole\n\nid: 2\ndata: cut")
        #expect(events.map(\.data) == ["whole"])
        #expect(parser.lastEventID == "1", "a reconnection resumes after the last whole event")
    }

    @Test func anIdHoldingNullIsIgnoredAndRetryTakesDigitsOnly() {
        let (_, parser) = events("id: 3\n\nid: 4\u{0}x\nretry: 15s\n\nretry: 2500\n\n")
        #expect(parser.lastEventID == "3")
        #expect(parser.reconnectionTime == .milliseconds(2_500))
    }

    @Test func aByteOrderMarkAtTheStartIsDropped() {
        let (events, _) = events("\u{FEFF}data: x\n\n")
        #expect(events == [.init(data: "x", line: 1)])
    }
}
