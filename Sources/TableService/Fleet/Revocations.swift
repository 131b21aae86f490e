import Foundation
import Synchronization

/// The revocations in force, kept in `__revocations` so that every instance shares them. Each
/// instance holds them in memory for the check every request makes (``refusal(user:device:)``),
/// and, where instances share the database, reads the table again four times a second (the fleet's
/// bookkeeping), so an instance refuses what another revoked within about a quarter of a second; the
/// instance that takes the revoke refuses at once.
final class Revocations: Sendable {
    private struct Key: Hashable {
        var kind: Revocation.Kind
        var subject: String
    }

    private let store: any TableStorage
    private let active = Mutex<[Key: Revocation]>([:])

    init(store: any TableStorage) {
        self.store = store
    }

    static func createSQL(dialect: SQLDialect) -> String {
        let text = dialect == .postgres ? "text COLLATE \"C\"" : "TEXT"
        let integer = dialect == .postgres ? "bigint" : "INTEGER"
        return """
            CREATE TABLE IF NOT EXISTS "__revocations" (
                "kind" \(text) NOT NULL, "subject" \(text) NOT NULL, "wipe" \(integer) NOT NULL,
                "revokedAt" \(integer) NOT NULL, PRIMARY KEY ("kind", "subject"))
            """
    }

    /// The revocation that refuses a request of `user` from `device`; nil when none does.
    func refusal(user: String?, device: String?) -> Revocation? {
        active.withLock { active in
            guard !active.isEmpty else { return nil }
            if let user, let revoked = active[Key(kind: .user, subject: user)] { return revoked }
            if let device, let revoked = active[Key(kind: .device, subject: device)] { return revoked }
            return nil
        }
    }

    /// Every revocation in force, the newest first.
    func all() -> [Revocation] {
        active.withLock { Array($0.values) }.sorted { ($0.revokedAt, $0.subject) > ($1.revokedAt, $1.subject) }
    }

    /// Reads the table again (what other instances revoked or restored).
    func reload() async throws(TableError) {
        let rows = try await store.query(
            SQLStatement(sql: "SELECT \"kind\", \"subject\", \"wipe\", \"revokedAt\" FROM \"__revocations\""))
        var read: [Key: Revocation] = [:]
        for row in rows {
            guard let kind = Revocation.Kind(rawValue: try row[0].text()) else { continue }
            let revocation = Revocation(
                kind: kind, subject: try row[1].text(), wipe: try row[2].integer() != 0, revokedAt: try row[3].integer()
            )
            read[Key(kind: kind, subject: revocation.subject)] = revocation
        }
        active.withLock { $0 = read }
    }

    /// Saves `revocation` (replacing an earlier one of the same subject) and applies it here at once.
    func revoke(_ revocation: Revocation) async throws(TableError) {
        try await store.execute([
            SQLStatement(
                sql: "DELETE FROM \"__revocations\" WHERE \"kind\" = ? AND \"subject\" = ?",
                values: [.text(revocation.kind.rawValue), .text(revocation.subject)]),
            SQLStatement(
                sql:
                    "INSERT INTO \"__revocations\" (\"kind\", \"subject\", \"wipe\", \"revokedAt\") VALUES (?, ?, ?, ?)",
                values: [
                    .text(revocation.kind.rawValue), .text(revocation.subject), .integer(revocation.wipe ? 1 : 0),
                    .integer(revocation.revokedAt),
                ]),
        ])
        active.withLock { $0[Key(kind: revocation.kind, subject: revocation.subject)] = revocation }
    }

    /// Undoes the revocation of `subject`; false when none was in force.
    func restore(_ kind: Revocation.Kind, _ subject: String) async throws(TableError) -> Bool {
        let values: [SQLValue] = [.text(kind.rawValue), .text(subject)]
        let found = try await store.query(
            SQLStatement(
                sql: "SELECT \"subject\" FROM \"__revocations\" WHERE \"kind\" = ? AND \"subject\" = ?",
                values: values))
        try await store.execute([
            SQLStatement(sql: "DELETE FROM \"__revocations\" WHERE \"kind\" = ? AND \"subject\" = ?", values: values)
        ])
        active.withLock { _ = $0.removeValue(forKey: Key(kind: kind, subject: subject)) }
        return !found.isEmpty
    }
}
