/// What the proxy does to one request.
public enum Fault: Sendable, Hashable, CustomStringConvertible {
    /// Forward the request and the response unchanged.
    case passThrough
    /// Wait this many milliseconds, then forward as usual.
    case delay(milliseconds: Int)
    /// Reset the connection (TCP RST) as soon as the request is read; nothing reaches the service.
    /// (To refuse connections outright, `ECONNREFUSED`, use ``FaultProxy/refuseConnections(_:)``.)
    case refuse
    /// Forward; send the client the response's head and half its body, then reset the connection.
    case resetMidResponse
    /// Answer this status (5xx) with a JSON error body; nothing reaches the service.
    case status(Int)
    /// Forward (the service applies the change), then close the connection without answering:
    /// the acknowledgement is lost.
    case dropResponse
    /// Forward; send only the first half of the body, with a `Content-Length` that matches it.
    case truncateBody
    /// Forward; send the body with bytes replaced by garbage (same length), so it is not JSON.
    case corruptBody
    /// Forward the request twice; the client gets the second answer.
    case duplicate

    /// Every kind, each with a typical argument (for tests that go through all of them).
    public static let allKinds: [Fault] = [
        .passThrough, .delay(milliseconds: 20), .refuse, .resetMidResponse, .status(503), .dropResponse,
        .truncateBody, .corruptBody, .duplicate,
    ]

    /// The spelling of ``init(parsing:)``: `pass`, `delay=200`, `refuse`, `reset`, `status=503`,
    /// `drop`, `truncate`, `corrupt`, `duplicate`.
    public var description: String {
        switch self {
        case .passThrough: "pass"
        case .delay(let milliseconds): "delay=\(milliseconds)"
        case .refuse: "refuse"
        case .resetMidResponse: "reset"
        case .status(let code): "status=\(code)"
        case .dropResponse: "drop"
        case .truncateBody: "truncate"
        case .corruptBody: "corrupt"
        case .duplicate: "duplicate"
        }
    }

    /// Parses the spelling of ``description``.
    public init(parsing text: String) throws(FaultProxyError) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        let name = parts.first?.lowercased() ?? ""
        let argument = parts.count > 1 ? parts[1] : nil
        func number(_ default: Int) throws(FaultProxyError) -> Int {
            guard let argument else { return `default` }
            guard let value = Int(argument), value >= 0 else {
                throw .invalidFault(text, "'\(argument)' is not a number")
            }
            return value
        }
        switch name {
        case "pass", "passthrough": self = .passThrough
        case "delay": self = .delay(milliseconds: try number(500))
        case "refuse": self = .refuse
        case "reset": self = .resetMidResponse
        case "status", "5xx":
            let code = try number(503)
            guard (500...599).contains(code) else { throw .invalidFault(text, "the status must be 500 to 599") }
            self = .status(code)
        case "drop": self = .dropResponse
        case "truncate": self = .truncateBody
        case "corrupt": self = .corruptBody
        case "duplicate": self = .duplicate
        default:
            throw .invalidFault(
                text,
                "unknown fault '\(name)'; use pass, delay=MS, refuse, reset, status=5xx, drop, truncate, corrupt or duplicate"
            )
        }
    }
}
