/// The store's logs that keep only their newest rows.
public enum KeptLog: String, Sendable, CaseIterable {
    /// The conflict journal's entries (10,000 unless set).
    case journal
    /// Row history events (20,000 unless set).
    case history
    /// The flight recorder's exchanges (5,000 unless set).
    case exchanges
}

extension SyncContext {
    /// How many of its newest rows `log` keeps.
    public nonisolated func retention(of log: KeptLog) throws(SyncError) -> Int {
        try read { db in try retention(log).count(db) }
    }

    /// Keeps the newest `count` rows of `log` (at least 1) from now on, and drops older ones at once.
    public nonisolated func setRetention(of log: KeptLog, to count: Int) async throws(SyncError) {
        let retention = retention(log)
        try await write { db in try retention.set(db, max(1, count)) }
    }

    private nonisolated func retention(_ log: KeptLog) -> Retention {
        switch log {
        case .journal: ConflictJournal.retention
        case .history: HistoryLog.retention
        case .exchanges: FlightRecorder.retention
        }
    }
}
