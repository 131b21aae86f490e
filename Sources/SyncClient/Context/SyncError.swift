import HTTPTypes
import SyncProtocol

/// Why a sync call failed. Every message says what happened and what the user can do.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The table was not described when the context was opened.
    case unknownTable(String)
    /// The service answered 404 for the table's rows: it has no table of that name.
    case serviceHasNoTable(String)
    /// A table name that cannot be a table: not letters, digits and underscores.
    case invalidTableName(String)
    /// An insert named an id that the local table already has.
    case itemExists(table: String, id: String)
    /// No local row has this id.
    case itemNotFound(table: String, id: String)
    /// The item is not usable (no id, a value of the wrong type...).
    case invalidItem(String)
    /// The new change cannot follow the change already queued for the item (insert after insert...).
    case changeNotAllowed(table: String, id: String, queued: OperationKind, new: OperationKind)
    /// No queued operation has this id.
    case operationNotFound(Int64)
    /// The operation is not in conflict, so it cannot be resolved.
    case notInConflict(Int64)
    /// The operation is being sent right now.
    case operationInFlight(Int64)
    /// The operation is held back from pushes: release it first.
    case operationHeld(Int64)
    /// The operation is in conflict: it waits for a decision, not for a hold or a retry.
    case operationInConflict(Int64)
    /// An earlier operation of the same item must reach the service first.
    case operationWaitsBehind(Int64, earlier: Int64)
    /// A hold's reason that cannot be kept (too long, or control characters).
    case invalidHoldReason(String)
    /// Purge refused: the table has changes that were not pushed.
    case pendingOperations(table: String, count: Int)
    /// The store is bound to another service and still holds changes it has not taken: choose to
    /// push them to the new service or discard them (``RemoteSwitchChoice``).
    case remoteSwitchRefused(RemoteSwitchRefusal)
    /// Push or pull stopped before the end; nothing was lost.
    case stopped(StopReason)
    /// No remote service address is configured.
    case noRemote
    /// The server answered something the protocol does not allow.
    case badResponse(String)
    /// The service broke the protocol in a way that makes its answers untrustworthy; nothing it
    /// sent in that answer was written.
    case serviceFault(ServiceFault)
    /// The local store failed.
    case storage(StoreFailure)
    /// The service went back in time (a restore: its answers carry another ``ServiceEpoch``) while a
    /// pull ran; the pull reconciles and starts again (see ``Reconciler/reconcileIfRestored(_:table:asking:)``).
    case serviceWentBack(ServiceEpoch)
    /// A local change was refused: this store's access to its service was revoked, so its data is
    /// read-only (or wiped) until the admin restores access.
    case readOnly(RevokedAccess)

    /// What happened and what the user can do.
    public var description: String {
        switch self {
        case .unknownTable(let name):
            "The table '\(name)' is not in this store. Pull it from the service first (todosync client --table "
                + "\(name) pull, or the dashboard's Tables setting)."
        case .serviceHasNoTable(let name):
            "The service has no table '\(name)' (HTTP 404). Check the table's name (letters, digits and "
                + "underscores) and the service's address."
        case .invalidTableName(let name):
            "'\(name)' is not a table name: use 1 to 64 letters, digits and underscores, not starting with a "
                + "digit or with __."
        case .itemExists(let table, let id):
            "An item with id '\(id)' already exists in '\(table)'. Edit it instead, or choose another id."
        case .itemNotFound(let table, let id):
            "No item with id '\(id)' in '\(table)'. It may have been deleted; pull to refresh."
        case .invalidItem(let reason):
            "The item cannot be stored: \(reason)."
        case .changeNotAllowed(let table, let id, let queued, let new):
            "Cannot \(new.rawValue) '\(id)' in '\(table)': an \(queued.rawValue) of it is already queued. "
                + (new == .insert ? "Edit the item instead." : "The item no longer exists locally.")
        case .operationNotFound(let id):
            "No queued operation #\(id). It may have been pushed or discarded already; reload the list."
        case .notInConflict(let id):
            "Operation #\(id) is not in conflict; there is nothing to resolve."
        case .operationInFlight(let id):
            "Operation #\(id) is being pushed right now. Try again when the push has finished."
        case .operationHeld(let id):
            "Operation #\(id) is held, so no push sends it. Release it first (todosync client release \(id), or "
                + "Release on the queue page)."
        case .operationInConflict(let id):
            "Operation #\(id) is in conflict: decide it on the conflict page (Use Client, Use Server or Cancel) "
                + "instead."
        case .operationWaitsBehind(let id, let earlier):
            "Operation #\(id) waits behind operation #\(earlier) of the same item, which goes first. Retry, "
                + "release or discard #\(earlier) first."
        case .invalidHoldReason(let reason):
            "The reason for a hold cannot be kept: \(reason)."
        case .pendingOperations(let table, let count):
            "'\(table)' has \(count) change(s) not yet pushed. Push first, or purge with force to drop them."
        case .remoteSwitchRefused(let refusal):
            "This store syncs with \(refusal.from) and still holds \(refusal.counts), so it was not switched to "
                + "\(refusal.to). Choose to push them to the new service or to discard them, then switch again."
        case .stopped(let reason):
            reason.description
        case .noRemote:
            "No remote service is configured. Set its address (for example http://127.0.0.1:8080)."
        case .badResponse(let detail):
            "The server's answer could not be understood: \(detail). Check that the address is a todosync or Mobile Apps table service."
        case .serviceFault(let fault):
            fault.description
        case .storage(let failure):
            failure.description
        case .readOnly(let revoked):
            "Not changed: this copy is read-only. " + revoked.summary
        case .serviceWentBack(let epoch):
            "The service went back in time"
                + (epoch.restoredTo.map { " to " + ProtocolDate.format(milliseconds: $0) } ?? "")
                + " (restored from a backup) during this sync. Sync again: this store then reads its tables "
                + "again and turns what the service lost into conflicts."
        }
    }

    /// Any error as a sync error: a ``SyncError`` as it is, a cancelled task as
    /// ``StopReason/cancelled``, anything else (SQLite, a file) as ``storage(_:)``.
    init(_ error: any Error) {
        switch error {
        case let error as SyncError: self = error
        case is CancellationError: self = .stopped(.cancelled)
        default: self = .storage(StoreFailure(error))
        }
    }
}

/// Why a push or pull stopped early. Queued changes are kept; retrying later is safe.
public enum StopReason: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Offline mode is on: changes queue, nothing is sent.
    case offline
    /// The server could not be reached (refused, DNS, no route...).
    case unreachable(String)
    /// The connection closed (or was reset) before the answer was complete: the request may or may
    /// not have reached the service. A push or pull sends it again a few times before it stops
    /// (``ConnectionRetry``).
    case connectionLost(String)
    /// The server said it timed out (HTTP 408).
    case timedOut
    /// The service's answer stopped coming: no byte for `seconds` (the idle deadline).
    case stalled(seconds: Double)
    /// The exchange took longer than `seconds` (the total deadline per request).
    case tooSlow(seconds: Double)
    /// The server failed (5xx) or is overloaded.
    case serverError(status: HTTPResponse.Status, message: String)
    /// The server refused our credentials (401/403).
    case notAuthorized(status: HTTPResponse.Status, message: String)
    /// The call was cancelled.
    case cancelled
    /// The token command (`--auth-token-command`) gave no token: it failed, hung, printed nothing
    /// or printed something that is not a JSON Web Token.
    case tokenCommandFailed(command: String, detail: String)
    /// The service's TLS certificate was refused: not signed by a trusted CA, for another host, or
    /// expired. Nothing was sent.
    case certificateRefused(host: String, detail: String)
    /// The key or the token would have gone in plain HTTP to a machine that is not this one: refused
    /// (anyone on the way could read it) unless ``SyncConfiguration/allowPlainHTTP``.
    case plainHTTPRefused(host: String)
    /// The server redirected to another origin (or a write anywhere): not followed, so neither the
    /// key nor the token nor the data went there. Carries the target.
    case redirectRefused(to: String)
    /// The service's admin revoked this user's or this device's access: the store deposits its
    /// unsynced changes in the service's escrow, then is wiped or kept read-only (``RevokedAccess``).
    case accessRevoked(AccessRevocation)

    /// What happened and what the user can do.
    public var description: String {
        switch self {
        case .offline:
            "Offline mode is on: changes are kept locally. Turn offline mode off to sync."
        case .unreachable(let detail):
            "The server is unreachable (\(detail)); your changes are kept. Check the address and try again."
        case .connectionLost(let detail):
            "The connection to the server kept dropping (\(detail)); your changes are kept, and those it "
                + "received are recognised by the next sync. Check the network and try again."
        case .timedOut:
            "The server did not answer in time; your changes are kept. Try again later."
        case .stalled(let seconds):
            "The server stopped sending its answer (nothing for \(Self.seconds(seconds))); your changes are kept. Try again later."
        case .tooSlow(let seconds):
            "The server's answer took longer than \(Self.seconds(seconds)), so it was abandoned; your changes are kept. Try again later, or allow more time."
        case .serverError(let status, let message):
            "The server failed (HTTP \(status.code)\(message.isEmpty ? "" : ": " + message)); your changes are kept. Try again later."
        case .notAuthorized(.unauthorized, let message):
            "The server refused access: sign-in expired or invalid (HTTP 401\(message.isEmpty ? "" : ": " + message)). "
                + "Your changes are kept; set a new auth token (or check the application key) and sync again."
        case .notAuthorized(let status, let message):
            "The server refused access (HTTP \(status.code)\(message.isEmpty ? "" : ": " + message)). Check the application key."
        case .cancelled:
            "Cancelled. Your changes are kept and go out with the next sync."
        case .certificateRefused(let host, let detail):
            "The certificate of \(host) is not trusted (\(detail)), so nothing was sent; your changes are kept. If "
                + "the service uses a CA of your own, give its certificate with --ca-file; check that the address "
                + "names the host its certificate is for."
        case .plainHTTPRefused(let host):
            "Not sent: the application key or the sign-in token would go to \(host) in plain HTTP, readable by anyone "
                + "on the way. Use the service's https:// address, or, on a network you trust, --allow-plain-http."
        case .tokenCommandFailed(let command, let detail):
            "The token command `\(command)` gave no sign-in token: \(detail). Your changes are kept; fix the "
                + "command (--auth-token-command) and sync again."
        case .accessRevoked(let revocation):
            "The service's admin revoked the access of \(revocation.whom)"
                + (revocation.wipe ? " and asked that this copy be removed" : "")
                + ". Unsynced changes go to the service's escrow, where the admin decides about them; ask the admin "
                + "to restore access to sync again."
        case .redirectRefused(let target):
            "The server redirected to \(target); todosync does not follow that (it would send the key, the sign-in "
                + "or your changes elsewhere), so nothing was sent there and your changes are kept. "
                + "Set the remote to the service's own address."
        }
    }

    /// A deadline in seconds as messages write it: "30 s", "1.5 s" (the doctor's stops too).
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
