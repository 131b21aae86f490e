import Foundation

/// An admin's revocation of one user's or one device's access (`POST /service/api/users/{user}/revoke`,
/// `…/devices/{id}/revoke`): every instance refuses the user's tokens, or the device's requests, with
/// 401 and a body that says so, until `…/restore-access` undoes it.
struct Revocation: Sendable, Hashable, Codable {
    /// What is revoked.
    enum Kind: String, Sendable, Hashable, Codable {
        /// A signed-in user, whatever device or token they use.
        case user
        /// One device (its `X-ZUMO-INSTALLATION-ID`), whoever uses it.
        case device
    }

    var kind: Kind
    /// The user's id, or the device's.
    var subject: String
    /// Whether the device is asked to remove the revoked rows and its queue (after depositing its
    /// unsynced changes), or only to stop writing.
    var wipe: Bool
    /// When it was revoked, in milliseconds since 1970.
    var revokedAt: Int64

    /// What the refused request's answer says.
    var message: String {
        let whom = kind == .user ? "The user '\(subject)'" : "This device (\(subject))"
        return "\(whom) no longer has access to this service: the service's admin revoked it"
            + (wipe ? " and asked that its copy of the data be removed." : ".")
            + " Changes not yet synced are kept; ask the admin to restore access."
    }
}
