import Foundation
import SyncClient

/// What the dashboard can truthfully say about its remote service.
enum RemoteState: Equatable, Sendable {
    case offline
    case noRemote
    case notContacted
    case syncing
    case reachable(lastContact: Date)
    case unreachable(since: Date)
    case failing(since: Date)
    case notAuthorized
    /// The service's admin revoked this user's or this device's access.
    case revoked
    /// The service redirected elsewhere, which the client does not follow.
    case redirected

    /// The dashboard's record of its exchanges with one remote.
    struct Contact: Equatable, Sendable {
        /// When the service last answered.
        var lastContact: Date?
        /// When it first failed to answer after its last answer, while it still fails.
        var unreachableSince: Date?
        /// Why the last exchange stopped, nil when it went through.
        var stopReason: StopReason?
    }

    /// The record after an exchange that ended as `summary` says.
    static func record(_ summary: SyncSummary, after previous: Contact?) -> Contact {
        var contact = previous ?? Contact()
        contact.stopReason = summary.stopReason
        switch summary.stopReason {
        case .unreachable?, .connectionLost?, .timedOut?, .stalled?, .tooSlow?, .serverError?, .certificateRefused?:
            contact.unreachableSince = contact.unreachableSince ?? summary.finishedAt
        case .notAuthorized?, .redirectRefused?, .accessRevoked?:
            contact.lastContact = summary.finishedAt
            contact.unreachableSince = nil
        case .offline?, .cancelled?, .tokenCommandFailed?, .plainHTTPRefused?:
            break
        case nil:
            contact.lastContact = summary.finishedAt
            contact.unreachableSince = nil
        }
        return contact
    }

    /// The state from what is known, most immediate first: offline mode, no remote, a running
    /// sync, then the last exchange with this remote.
    static func decide(offline: Bool, remote: String, running: Bool, contact: Contact?) -> RemoteState {
        if offline { return .offline }
        if remote.isEmpty { return .noRemote }
        if running { return .syncing }
        guard let contact else { return .notContacted }
        switch contact.stopReason {
        case .unreachable?, .connectionLost?, .timedOut?, .stalled?, .tooSlow?, .certificateRefused?:
            return .unreachable(since: contact.unreachableSince ?? contact.lastContact ?? Date())
        case .serverError?:
            return .failing(since: contact.unreachableSince ?? contact.lastContact ?? Date())
        case .notAuthorized?, .tokenCommandFailed?:
            return .notAuthorized
        case .accessRevoked?:
            return .revoked
        case .redirectRefused?, .plainHTTPRefused?:
            return .redirected
        case .offline?, .cancelled?, nil:
            guard let last = contact.lastContact else { return .notContacted }
            return .reachable(lastContact: last)
        }
    }

    /// A word for CSS classes and scripts.
    var word: String {
        switch self {
        case .offline: "offline"
        case .noRemote, .notContacted: "unknown"
        case .syncing: "syncing"
        case .reachable: "reachable"
        case .unreachable, .failing, .notAuthorized, .revoked, .redirected: "unreachable"
        }
    }

    /// The state in words for the header.
    var label: String {
        switch self {
        case .offline: "Offline mode"
        case .noRemote: "No service set"
        case .notContacted: "Not contacted yet"
        case .syncing: "Syncing"
        case .reachable(let last): "Reachable (last contact \(Self.time(last)))"
        case .unreachable(let since): "Unreachable since \(Self.time(since))"
        case .failing(let since): "Service failing since \(Self.time(since))"
        case .notAuthorized: "Not authorised: sign in again (auth token) or check the application key"
        case .revoked: "Access revoked by the service's admin"
        case .redirected: "Redirected elsewhere: check the service's address"
        }
    }

    /// `10:02:03 UTC` today, `2026-11-21 10:02 UTC` otherwise.
    static func time(_ date: Date, now: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let clock = "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
        if calendar.isDate(date, inSameDayAs: now) { return clock + " UTC" }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(clock) UTC"
    }
}
