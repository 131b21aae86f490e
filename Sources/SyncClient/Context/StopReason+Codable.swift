import HTTPTypes

extension StopReason {
    /// `command` holds a token command's text, or the host whose certificate was refused.
    private enum CodingKeys: String, CodingKey { case kind, status, detail, message, seconds, command, revoked }

    /// `unreachable`, `connectionLost`, `timedOut`, `stalled`, `tooSlow`, `serverError`, `notAuthorized`, `offline`, `cancelled`,
    /// `redirectRefused`, `tokenCommandFailed`, `certificateRefused`, `plainHTTPRefused`, `accessRevoked`.
    public var kind: String {
        switch self {
        case .offline: "offline"
        case .unreachable: "unreachable"
        case .connectionLost: "connectionLost"
        case .timedOut: "timedOut"
        case .stalled: "stalled"
        case .tooSlow: "tooSlow"
        case .serverError: "serverError"
        case .notAuthorized: "notAuthorized"
        case .cancelled: "cancelled"
        case .redirectRefused: "redirectRefused"
        case .tokenCommandFailed: "tokenCommandFailed"
        case .certificateRefused: "certificateRefused"
        case .plainHTTPRefused: "plainHTTPRefused"
        case .accessRevoked: "accessRevoked"
        }
    }

    /// Decodes what ``encode(to:)`` wrote.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let code = try container.decodeIfPresent(Int.self, forKey: .status) ?? 0
        let status = HTTPResponse.Status(code: (0...999).contains(code) ? code : 0)
        let detail = try container.decodeIfPresent(String.self, forKey: .detail) ?? ""
        switch try container.decode(String.self, forKey: .kind) {
        case "offline": self = .offline
        case "timedOut": self = .timedOut
        case "connectionLost": self = .connectionLost(detail)
        case "stalled": self = .stalled(seconds: try container.decodeIfPresent(Double.self, forKey: .seconds) ?? 0)
        case "tooSlow": self = .tooSlow(seconds: try container.decodeIfPresent(Double.self, forKey: .seconds) ?? 0)
        case "serverError": self = .serverError(status: status, message: detail)
        case "notAuthorized": self = .notAuthorized(status: status, message: detail)
        case "cancelled": self = .cancelled
        case "redirectRefused": self = .redirectRefused(to: detail)
        case "plainHTTPRefused": self = .plainHTTPRefused(host: detail)
        case "accessRevoked": self = .accessRevoked(try container.decode(AccessRevocation.self, forKey: .revoked))
        case "certificateRefused":
            self = .certificateRefused(
                host: try container.decodeIfPresent(String.self, forKey: .command) ?? "", detail: detail)
        case "tokenCommandFailed":
            self = .tokenCommandFailed(
                command: try container.decodeIfPresent(String.self, forKey: .command) ?? "", detail: detail)
        default: self = .unreachable(detail)
        }
    }

    /// `{"kind": "...", "status": 503, "detail": "...", "message": "<what to tell the user>"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        switch self {
        case .unreachable(let detail), .connectionLost(let detail), .redirectRefused(let detail),
            .plainHTTPRefused(let detail):
            try container.encode(detail, forKey: .detail)
        case .serverError(let status, let detail), .notAuthorized(let status, let detail):
            try container.encode(status.code, forKey: .status)
            try container.encode(detail, forKey: .detail)
        case .stalled(let seconds), .tooSlow(let seconds):
            try container.encode(seconds, forKey: .seconds)
        case .tokenCommandFailed(let command, let detail), .certificateRefused(let command, let detail):
            try container.encode(command, forKey: .command)
            try container.encode(detail, forKey: .detail)
        case .accessRevoked(let revocation):
            try container.encode(revocation, forKey: .revoked)
        case .offline, .timedOut, .cancelled: break
        }
        try container.encode(description, forKey: .message)
    }
}
