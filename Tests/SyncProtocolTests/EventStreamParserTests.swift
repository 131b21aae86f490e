import SyncProtocol
import Testing

@Suite struct EventStreamParserTests {
    @Test func eventsCutAnywhereAreReadWhole() throws {
        let text =
            ": heartbeat\n\nevent: change\nid: 7\ndata: {\"a\":1}\n\ndata: one\r\ndata:two\r\rretry: 1500\nid: 8\ndata: x\n\n"
        var parser = EventStreamParser()
        var events: [ReceivedEvent] = []
        for byte in text.utf8 { events += try parser.feed([byte]) }
        #expect(
            events == [
                ReceivedEvent(id: "7", event: "change", data: "{\"a\":1}"),
                ReceivedEvent(id: "7", data: "one\ntwo"),
                ReceivedEvent(id: "8", data: "x"),
            ])
        #expect(parser.retryMilliseconds == 1500)
    }

    @Test func anEventWithoutDataIsNotDispatched() throws {
        var parser = EventStreamParser()
        #expect(try parser.feed(Array("event: change\nid: 3\n\n".utf8)).isEmpty)
    }

    @Test func aLineWithoutEndIsRefusedAtTheLimit() {
        var parser = EventStreamParser(maxLineLength: 16)
        #expect(throws: EventStreamParser.LineTooLong.self) {
            _ = try parser.feed(Array(repeating: UInt8(ascii: "a"), count: 17))
        }
    }
}
