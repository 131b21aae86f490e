import SyncClient

/// The question the Settings page asks when the address names another service while changes are
/// queued: push them to the new service, or discard them (two forms that send the settings again
/// with the choice), or stay.
struct RemoteSwitchQuestion: Encodable, Sendable {
    /// The service the dashboard syncs with.
    var from: String
    /// The service asked for.
    var to: String
    /// "3 changes not yet pushed and 1 conflict".
    var counts: String
    /// How many queued changes there are.
    var total: Int
    /// Whether the form asked to sign out (sent again with the choice).
    var signOut: Bool

    init(_ refusal: RemoteSwitchRefusal, signOut: Bool) {
        from = refusal.from.description
        to = refusal.to.description
        counts = refusal.counts
        total = refusal.total
        self.signOut = signOut
    }
}
