/// What happens to the queued changes when a store moves to another service (see ``RemoteBinding``).
public enum RemoteSwitchChoice: String, Sendable, Hashable, Codable, CaseIterable {
    /// Keep every queued change and send it to the new service with the next push: inserts stay
    /// inserts, updates become inserts of the row as it is now (the new service never had the item;
    /// if it has an item with that id, the insert meets it as a conflict), deletes are sent as they
    /// are (a service without the item answers 404, which settles them). Conflicts and refusals of
    /// the old service are forgotten: their changes are pending again.
    case push
    /// Drop every queued change, conflict and refusal with the rows they kept.
    case discard
}
