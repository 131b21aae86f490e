import Testing

@testable import FaultProxy

/// What each fault makes of an exchange, decided without a socket (one test per row of the table
/// in ``ClientAction``).
@Suite struct ClientActionTests {
    let answer = ProxiedResponse.json(200, #"{"id":"a","text":"hello"}"#)

    func text(_ action: ClientAction) -> String {
        switch action {
        case .send(let bytes, _), .sendThenReset(let bytes): String(decoding: bytes, as: UTF8.self)
        case .close, .withhold, .relay: ""
        }
    }

    @Test func anEventStreamIsRelayedAndDropsUnderEveryFaultThatSpoilsAnAnswer() {
        let request = ProxiedRequest(
            method: "GET", target: "/tables/todoitem/$changes", headers: ["Accept": "text/event-stream"])
        #expect(request.wantsEventStream)
        for fault in [Fault.passThrough, .delay(milliseconds: 5), .duplicate] {
            #expect(ClientAction.relaying(request, under: fault) == .relay(request, cut: false))
        }
        for fault in [Fault.dropResponse, .resetMidResponse, .truncateBody, .corruptBody] {
            #expect(ClientAction.relaying(request, under: fault) == .relay(request, cut: true))
        }
    }

    @Test func refuseResetsBeforeAnythingIsForwarded() {
        #expect(ClientAction.beforeForwarding(.refuse, keepAlive: true) == .sendThenReset([]))
    }

    @Test func statusAnswersAtOnceWithAJSONError() throws {
        let action = try #require(ClientAction.beforeForwarding(.status(503), keepAlive: true))
        #expect(text(action).hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(text(action).hasSuffix(#"without asking the service."}"#))
        guard case .send(_, let close) = action else {
            Issue.record("expected a send, got \(action)")
            return
        }
        #expect(!close)
    }

    @Test(arguments: [Fault.passThrough, .delay(milliseconds: 5), .resetMidResponse, .dropResponse, .truncateBody])
    func faultsThatNeedTheServiceForwardFirst(_ fault: Fault) {
        #expect(ClientAction.beforeForwarding(fault, keepAlive: true) == nil)
    }

    @Test func passThroughSendsTheAnswerFramedForTheClient() {
        let action = ClientAction.delivering(answer, under: .passThrough, keepAlive: false, sequence: 1)
        #expect(action == .send(answer.framed(keepAlive: false), close: true))
        #expect(text(action).contains("Content-Length: 25\r\nConnection: close\r\n\r\n{"))
    }

    @Test func dropClosesWithoutAnswering() {
        #expect(ClientAction.delivering(answer, under: .dropResponse, keepAlive: true, sequence: 1) == .close)
    }

    @Test func resetSendsTheHeadAndHalfTheBodyThenResets() {
        let action = ClientAction.delivering(answer, under: .resetMidResponse, keepAlive: true, sequence: 1)
        guard case .sendThenReset(let bytes) = action else {
            Issue.record("expected a reset, got \(action)")
            return
        }
        let head = answer.head(bodyLength: answer.body.count, keepAlive: true)
        #expect(bytes.count == head.count + answer.body.count / 2)
    }

    @Test func truncateSendsHalfTheBodyWithAMatchingLength() {
        let action = ClientAction.delivering(answer, under: .truncateBody, keepAlive: true, sequence: 1)
        #expect(text(action).hasSuffix("Content-Length: 12\r\nConnection: keep-alive\r\n\r\n" + #"{"id":"a","t"#))
    }

    @Test func corruptKeepsTheLengthAndBreaksTheJSON() {
        let action = ClientAction.delivering(answer, under: .corruptBody, keepAlive: true, sequence: 7)
        guard case .send(let bytes, _) = action else {
            Issue.record("expected a send, got \(action)")
            return
        }
        let body = bytes.suffix(answer.body.count)
        #expect(body.first == UInt8(ascii: "#"))
        #expect(ClientAction.corrupt(answer.body, seed: 7) == Array(body))
    }

    @Test func anInterceptorsDecisionsBecomeActions() {
        #expect(ClientAction.intercepted(.withhold, keepAlive: true) == .withhold)
        #expect(ClientAction.intercepted(.hangUp, keepAlive: true) == .close)
        #expect(
            ClientAction.intercepted(.answer(answer), keepAlive: true)
                == .send(answer.framed(keepAlive: true), close: false))
    }

    @Test func anUnreachableServiceIsABadGateway() {
        let action = ClientAction.badGateway("refused", keepAlive: true)
        #expect(text(action).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
    }
}
