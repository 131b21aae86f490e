import SyncClient

/// A row's latest queued change, as its editor describes it.
struct PendingChange: Encodable, Sendable {
    var kind: String
    var state: String
    /// The badge's CSS kind.
    var badge: String
    var conflictHref: String?
    var message: String?

    /// The latest queued change of the row `id` of `table`, if any.
    static func latest(_ context: SyncContext, table: String, id: String) -> PendingChange? {
        guard let operation = try? context.operations.of(table: table, itemId: id).last else { return nil }
        return PendingChange(
            kind: operation.kind.rawValue, state: Display.stateLabel(operation.state),
            badge: Display.stateBadge(operation.state),
            conflictHref: operation.state == .conflict ? "/conflicts/\(operation.id)" : nil,
            message: operation.message.map { ReadableAnswer($0).text })
    }
}
