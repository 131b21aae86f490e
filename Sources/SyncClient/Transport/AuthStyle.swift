import HTTPTypes
import SyncProtocol

/// How the client sends a signed-in user's token.
public enum AuthStyle: String, Sendable, CaseIterable, Codable {
    /// `X-ZUMO-AUTH: T`, as Mobile Apps clients send it.
    case zumo
    /// `Authorization: Bearer T`, as a service secured the usual ASP.NET Core way expects it (the
    /// Datasync toolkit's client sends this).
    case bearer

    /// What the protocol's own clients send: zumo over v2, bearer over v3.
    public static func usual(for tableProtocol: TableProtocol) -> AuthStyle {
        tableProtocol == .v3 ? .bearer : .zumo
    }

    /// The header field carrying `token`.
    func field(_ token: String) -> HTTPField {
        switch self {
        case .zumo: HTTPField(name: ProtocolHeader.authToken, value: token)
        case .bearer: HTTPField(name: .authorization, value: "Bearer " + token)
        }
    }
}
