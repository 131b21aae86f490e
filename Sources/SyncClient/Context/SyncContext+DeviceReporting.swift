import Foundation
import GRDB
import SyncProtocol

extension SyncContext {
    /// What the device reports to a todosync service's fleet view: its queue, read from the store.
    static func reportedFigures(store: LocalStore, queue: SyncOperationQueue) -> DeviceReporting.Figures? {
        try? store.read { db in
            let counts = try queue.counts(db)
            let oldest = try String.fetchOne(db, sql: "SELECT min(\"queuedAt\") FROM \"__operations\"")
            let age = Timestamp.date(oldest).map { max(0, Int(Date().timeIntervalSince($0))) } ?? 0
            return DeviceReporting.Figures(
                queue: counts.filter(\.key.isWaiting).values.reduce(0, +), oldestSeconds: age,
                conflicts: counts[.conflict] ?? 0)
        }
    }

    /// Uploads `zip`, this device's redacted support bundle, to the service that asked for it
    /// (`POST /devices/{id}/bundle`).
    /// - Throws: ``SyncError`` when there is no remote or the service refuses it (the message says why).
    public func uploadSupportBundle(_ zip: Data) async throws(SyncError) {
        try await remote.uploadSupportBundle(zip)
    }
}
