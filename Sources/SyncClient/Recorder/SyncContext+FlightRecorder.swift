import Foundation
import GRDB

extension SyncContext {
    /// The recorded exchanges with the service matching `query`, newest first, one page.
    public nonisolated func exchanges(_ query: ExchangeQuery = ExchangeQuery()) throws(SyncError) -> ExchangePage {
        try read { [recorder] db in try recorder.page(db, query) }
    }
}
