import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol

/// Who may use the service's own pages and its admin API (`/service/api`): with an admin key
/// (`--admin-key`), whoever signs in with it (pages) or sends it as `Authorization: Bearer` (API);
/// a user's token or the application key alone is refused. Without one, loopback requests only,
/// behind the application key's form when the service has one.
struct ServiceAccess: Sendable {
    let adminKey: String?
    let applicationKey: String?

    /// What a request to the pages or the API gets.
    enum Verdict: Equatable {
        case allowed
        /// No credentials: the pages show the sign-in form, the API answers 401.
        case signInNeeded
        /// Credentials that are not the admin's, or a request from off this machine without an admin key.
        case refused(String)
    }

    /// The key the sign-in form asks for, and what the page calls it.
    var formKey: (key: String, name: String)? {
        if let adminKey { return (adminKey, "admin key") }
        return applicationKey.map { ($0, "application key") }
    }

    /// The verdict on `request`; `signedIn` says whether it carries this process's session cookie.
    func verdict(_ request: Request, signedIn: Bool) -> Verdict {
        let bearer = Self.bearer(request)
        if let adminKey {
            if let bearer {
                return ApplicationKey.matches(bearer, adminKey)
                    ? .allowed : .refused("That is not the admin key.")
            }
            if signedIn { return .allowed }
            if request.headers[ProtocolHeader.applicationKey] != nil || request.headers[ProtocolHeader.authToken] != nil
            {
                return .refused(
                    "The service's admin pages need the admin key, not a user's token or the application key.")
            }
            return .signInNeeded
        }
        guard Self.isLoopback(request.clientAddress) else {
            return .refused(
                "The service's admin pages answer this machine only: start todosync serve with --admin-key to reach them from elsewhere."
            )
        }
        guard let applicationKey else { return .allowed }
        if signedIn { return .allowed }
        if let given = request.headers[ProtocolHeader.applicationKey] {
            return ApplicationKey.matches(given, applicationKey) ? .allowed : .refused("That is not the key.")
        }
        return .signInNeeded
    }

    private static func bearer(_ request: Request) -> String? {
        guard let value = request.headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return "" }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    /// Whether `address` is this machine (a request made in process has none).
    static func isLoopback(_ address: String?) -> Bool {
        guard let address else { return true }
        return address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }
}
