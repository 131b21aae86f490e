/// The settings page's content (`/settings`).
struct SettingsPage: Encodable, Sendable {
    /// The form: saved values, or as typed with a message per field to fix.
    var form: SettingsController.Form
    /// The embedded service's address, when the dashboard has one.
    var embeddedURL: String?
    /// Each table's conflict policy and the journal's retention.
    var policies: PoliciesView
    /// Asked when the address names another service while changes are queued.
    var switchQuestion: RemoteSwitchQuestion?
    /// The Tables setting: saved, or as typed with what to fix.
    var tables: TablesForm
    /// The table protocol and the delta tokens.
    var syncState: SyncStateView
    /// Sign-in links and sessions, when the dashboard asks who you are.
    var access: AccessView?

    /// The Access section: who you are and how many sessions are open.
    struct AccessView: Encodable, Sendable {
        var role: String
        var openSessions: Int
        var oneSession: Bool
    }

    /// The Tables field.
    struct TablesForm: Encodable, Sendable {
        var value: String
        var error: String?
    }
}
