import Foundation
import SyncClient

/// The dashboard's one way to point its store at a remote — at start-up, from the Settings page and
/// from `/api/settings`: the address given, or (nil) the embedded service; saved in `settings.json`
/// only once the store has taken it.
///
/// The store is bound to one service (``SyncContext/setRemote(url:applicationKey:service:onSwitch:)``):
/// another service removes the old one's rows, and is refused with
/// ``SyncError/remoteSwitchRefused(_:)`` while changes are queued unless `onSwitch` says what becomes
/// of them. The embedded service is known by name, since its address follows the dashboard's port.
struct RemoteSetting: Sendable {
    /// The embedded service, whatever port the dashboard listens on.
    static let embeddedService = ServiceIdentity(name: "the embedded service")

    let context: SyncContext
    let settings: SettingsFile
    let embeddedURL: @Sendable () -> String?
    /// What the dashboard's own client sends the embedded service when the dashboard asks who you
    /// are (see ``AccessGate``); nil on loopback.
    var embeddedKey: String? = nil

    /// Points the store at `remote` (nil: the embedded service, if any) and saves the choice.
    @discardableResult
    func apply(remote: URL?, applicationKey: String?, onSwitch: RemoteSwitchChoice?) async throws -> RemoteChange {
        let embedded = remote == nil ? embeddedURL().flatMap(URL.init(string:)) : nil
        let change = try await context.setRemote(
            url: remote ?? embedded, applicationKey: embedded == nil ? applicationKey : embeddedKey,
            service: embedded == nil ? nil : Self.embeddedService, onSwitch: onSwitch)
        var saved = settings.settings
        saved.remoteURL = remote?.absoluteString
        // The key is kept beside the store (see `SyncContext.applicationKey`), never in this file.
        saved.applicationKey = nil
        if saved != settings.settings { try settings.save(saved) }
        return change
    }
}
