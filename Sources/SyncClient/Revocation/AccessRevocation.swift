import Foundation

/// The service's admin revoked this store's access: its user's (``Kind-swift.enum/user``) or this
/// device's (``Kind-swift.enum/device``). Read from the 401 that refuses every request of theirs
/// (`{"error": …, "revoked": {"kind", "subject", "wipe", "revokedAt"}}`).
public struct AccessRevocation: Sendable, Hashable, Codable {
    /// Whose access was revoked.
    public enum Kind: String, Sendable, Hashable, Codable {
        case user, device
    }

    public var kind: Kind
    /// The user's id, or the device's.
    public var subject: String
    /// Whether the admin asked this device to remove its copy of the data (after its unsynced
    /// changes went to escrow); otherwise it keeps it, read-only.
    public var wipe: Bool
    /// When it was revoked, in milliseconds since 1970.
    public var revokedAt: Int64

    public init(kind: Kind, subject: String, wipe: Bool, revokedAt: Int64) {
        self.kind = kind
        self.subject = subject
        self.wipe = wipe
        self.revokedAt = revokedAt
    }

    /// The revocation a 401's body describes; nil when the body is another refusal.
    static func of(_ body: Data) -> AccessRevocation? {
        struct Answer: Decodable { var revoked: AccessRevocation }
        return try? JSONDecoder().decode(Answer.self, from: body).revoked
    }

    /// When it was revoked.
    public var date: Date { Date(timeIntervalSince1970: Double(revokedAt) / 1000) }

    /// Whose access it names, for people: "the user 'alice'", "this device".
    public var whom: String { kind == .user ? "the user '\(subject)'" : "this device (\(subject))" }
}
