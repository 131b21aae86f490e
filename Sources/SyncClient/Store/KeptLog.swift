/// The store's logs that keep only their newest rows.
public enum KeptLog: String, Sendable, CaseIterable {
    /// The conflict journal's entries (10,000 unless set).
    case journal
    /// Row history events (20,000 unless set).
    case history
    /// The flight recorder's exchanges (5,000 unless set).
    case exchanges
}

extension KeptLog {
    /// How many of its newest rows the log keeps, and where that number is saved.
    var retention: Retention {
        switch self {
        case .journal: ConflictJournal.retention
        case .history: HistoryLog.retention
        case .exchanges: FlightRecorder.retention
        }
    }
}
