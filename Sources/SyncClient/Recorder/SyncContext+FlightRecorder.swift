import Foundation
import GRDB

extension SyncContext {
    /// The recorded exchanges with the service matching `query`, newest first, one page.
    public nonisolated func exchanges(_ query: ExchangeQuery = ExchangeQuery()) throws(SyncError) -> ExchangePage {
        try read { [recorder] db in try recorder.page(db, query) }
    }

    /// How many exchanges the flight recorder keeps (the newest; 5,000 unless set).
    public nonisolated func recorderRetention() throws(SyncError) -> Int {
        try read { [recorder] db in try recorder.retention(db) }
    }

    /// Keeps the newest `count` exchanges (at least 1) from now on, and drops older ones at once.
    public nonisolated func setRecorderRetention(_ count: Int) throws(SyncError) {
        try write { [recorder] db in try recorder.setRetention(db, max(1, count)) }
    }
}
