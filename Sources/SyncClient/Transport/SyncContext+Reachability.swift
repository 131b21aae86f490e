import Foundation

extension SyncContext {
    /// Whether the service answers at all now: one `GET` of no rows of the first table, where any
    /// HTTP answer counts (an error status too) and only a failure to get one does not. Auto-sync
    /// asks this every few seconds while it backs off after the service was unreachable, so that it
    /// syncs as soon as the service is back instead of at the end of a long backoff. Never in
    /// offline mode; never writes the store (the exchange is in the flight recorder).
    public func remoteAnswers() async -> Bool {
        guard !monitor.offline, let transport else { return false }
        let table = tables.first?.name ?? TableDescription.todoItem.name
        do {
            _ = try await transport.send(
                .get, transport.path(table: table), query: [("$top", "0")], for: .reachability(table: table))
            return true
        } catch {
            return false
        }
    }
}
