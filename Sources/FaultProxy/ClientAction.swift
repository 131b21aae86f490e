/// What the proxy does on a client's connection once an exchange is decided: a pure function of
/// the fault and the answer, performed by ``ProxyConnectionHandler``.
enum ClientAction: Equatable, Sendable {
    /// Write these bytes; close the connection afterwards when `close`, else read the next request.
    case send([UInt8], close: Bool)
    /// Write these bytes (maybe none), then reset the connection (TCP RST).
    case sendThenReset([UInt8])
    /// Close the connection without answering (FIN).
    case close
    /// Write nothing and read nothing more: the client waits until it gives up.
    case withhold
    /// Relay an event stream (`Accept: text/event-stream`) as the service writes it, then close;
    /// with `cut`, close both connections after the first part of the body: a stream that drops.
    case relay(ProxiedRequest, cut: Bool)

    /// The answer to an exchange that a fault settles before the service is asked (`refuse`,
    /// `status`); nil when the request must be forwarded.
    static func beforeForwarding(_ fault: Fault, keepAlive: Bool) -> ClientAction? {
        switch fault {
        case .refuse:
            .sendThenReset([])
        case .status(let code):
            .send(
                ProxiedResponse.json(
                    code, #"{"error":"Injected fault: the proxy answered \#(code) without asking the service."}"#
                ).framed(keepAlive: keepAlive), close: !keepAlive)
        case .passThrough, .delay, .resetMidResponse, .dropResponse, .truncateBody, .corruptBody, .duplicate:
            nil
        }
    }

    /// How an event stream goes under `fault`, once the faults settled before forwarding are not it:
    /// every fault that spoils an answer drops the stream after its first part.
    static func relaying(_ request: ProxiedRequest, under fault: Fault) -> ClientAction {
        switch fault {
        case .dropResponse, .resetMidResponse, .truncateBody, .corruptBody: .relay(request, cut: true)
        case .passThrough, .delay, .refuse, .status, .duplicate: .relay(request, cut: false)
        }
    }

    /// What the client gets of the service's `response` under `fault`; `sequence` seeds the
    /// corruption so that a replay corrupts the same bytes.
    static func delivering(
        _ response: ProxiedResponse, under fault: Fault, keepAlive: Bool, sequence: Int
    ) -> ClientAction {
        switch fault {
        case .dropResponse:
            return .close
        case .resetMidResponse:
            let head = response.head(bodyLength: response.body.count, keepAlive: keepAlive)
            let cut = response.body.isEmpty ? head.count / 2 : head.count + response.body.count / 2
            return .sendThenReset(Array((head + response.body).prefix(cut)))
        case .truncateBody:
            var cut = response
            cut.body = Array(response.body.prefix(response.body.count / 2))
            return .send(cut.framed(keepAlive: keepAlive), close: !keepAlive)
        case .corruptBody:
            var garbled = response
            garbled.body = corrupt(response.body, seed: UInt64(sequence))
            return .send(garbled.framed(keepAlive: keepAlive), close: !keepAlive)
        case .passThrough, .delay, .refuse, .status, .duplicate:
            return .send(response.framed(keepAlive: keepAlive), close: !keepAlive)
        }
    }

    /// What the client gets when the service could not be asked.
    static func badGateway(_ reason: String, keepAlive: Bool) -> ClientAction {
        let text = #"{"error":"The proxy could not reach the service: \#(reason)"}"#
        return .send(ProxiedResponse.json(502, text).framed(keepAlive: keepAlive), close: !keepAlive)
    }

    /// What the client gets for an interceptor's decision.
    static func intercepted(_ interception: Interception, keepAlive: Bool) -> ClientAction {
        switch interception {
        case .answer(let response): .send(response.framed(keepAlive: keepAlive), close: !keepAlive)
        case .withhold: .withhold
        case .hangUp: .close
        }
    }

    /// The body with about one byte in eight replaced, and its first byte made invalid JSON.
    static func corrupt(_ body: [UInt8], seed: UInt64) -> [UInt8] {
        guard !body.isEmpty else { return Array("\u{1}".utf8) }
        var random = SplitMix64(seed: seed)
        var bytes = body
        bytes[0] = UInt8(ascii: "#")
        for index in bytes.indices.dropFirst() where random.next() % 8 == 0 {
            bytes[index] = UInt8(truncatingIfNeeded: random.next() | 0x80)
        }
        return bytes
    }
}
