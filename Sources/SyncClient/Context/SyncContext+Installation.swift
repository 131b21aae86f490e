import Foundation

extension SyncContext {
    /// Where the store keeps its installation id.
    static let installationIDKey = "installationID"

    /// The store's installation id, made (a lower-case UUID) and saved the first time.
    static func installationID(of store: LocalStore) throws(SyncError) -> String {
        try store.write { db in
            if let saved = try store.config(db, installationIDKey) { return saved }
            let made = UUID().uuidString.lowercased()
            try store.setConfig(db, installationIDKey, made)
            return made
        }
    }
}
