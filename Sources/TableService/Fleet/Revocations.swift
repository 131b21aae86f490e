import Foundation
import Synchronization

/// The revocations in force, kept in `__revocations` so that every instance shares them. Each
/// instance holds them in memory for the check every request makes (``refusal(user:device:)``),
/// and, where instances share the database, reads the table again four times a second (the fleet's
/// bookkeeping), so an instance refuses what another revoked within about a quarter of a second; the
/// instance that takes the revoke refuses at once. Until it has read the table once, a request
/// reads it first (``checked(user:device:)``): a restarted instance refuses whom it refused before.
final class Revocations: Sendable {
    private struct Key: Hashable {
        var kind: Revocation.Kind
        var subject: String
    }

    /// The revocations in force here, and how many revokes and restores this instance made.
    private struct State {
        var active: [Key: Revocation] = [:]
        var localChanges = 0
        /// Whether a whole read of the table has been put in force.
        var isLoaded = false
    }

    private let store: any TableStorage
    private let state = Mutex(State())

    init(store: any TableStorage) {
        self.store = store
    }

    static func createSQL(dialect: SQLDialect) -> String {
        let text = dialect.textColumn
        let integer = dialect.integerColumn
        return """
            CREATE TABLE IF NOT EXISTS "__revocations" (
                "kind" \(text) NOT NULL, "subject" \(text) NOT NULL, "wipe" \(integer) NOT NULL,
                "revokedAt" \(integer) NOT NULL, PRIMARY KEY ("kind", "subject"))
            """
    }

    /// The revocation that refuses a request of `user` from `device`, after reading the table if
    /// this instance has not yet; nil when none does. Fails when that read does (never lets in
    /// whom the table may refuse).
    func checked(user: String?, device: String?) async throws(TableError) -> Revocation? {
        if !state.withLock({ $0.isLoaded }) { try await reload() }
        return refusal(user: user, device: device)
    }

    /// The revocation in force here that refuses a request of `user` from `device`; nil when none
    /// does.
    func refusal(user: String?, device: String?) -> Revocation? {
        state.withLock { state in
            let active = state.active
            guard !active.isEmpty else { return nil }
            if let user, let revoked = active[Key(kind: .user, subject: user)] { return revoked }
            if let device, let revoked = active[Key(kind: .device, subject: device)] { return revoked }
            return nil
        }
    }

    /// Every revocation in force, the newest first.
    func all() -> [Revocation] {
        state.withLock { Array($0.active.values) }.sorted { ($0.revokedAt, $0.subject) > ($1.revokedAt, $1.subject) }
    }

    /// Reads the table again (what other instances revoked or restored).
    func reload() async throws(TableError) {
        let mark = changeMark
        apply(try await read(), readAfter: mark)
    }

    /// How many revokes and restores this instance made: taken before a read of the table, so that
    /// ``apply(_:readAfter:)`` knows whether one happened meanwhile.
    var changeMark: Int { state.withLock { $0.localChanges } }

    /// The revocations in the table.
    func read() async throws(TableError) -> [Revocation] {
        let rows = try await store.query(
            SQLStatement(sql: "SELECT \"kind\", \"subject\", \"wipe\", \"revokedAt\" FROM \"__revocations\""))
        var read: [Revocation] = []
        for row in rows {
            guard let kind = Revocation.Kind(rawValue: try row.text("kind")) else { continue }
            read.append(
                Revocation(
                    kind: kind, subject: try row.text("subject"), wipe: try row.integer("wipe") != 0,
                    revokedAt: try row.integer("revokedAt")))
        }
        return read
    }

    /// Puts `read` in force, unless a revoke or restore was made here since `mark`: the read may have
    /// begun before that change committed, and the next pass (or, before a whole read was put in
    /// force, the next request) reads it anyway.
    func apply(_ read: [Revocation], readAfter mark: Int) {
        let active = Dictionary(read.map { (Key(kind: $0.kind, subject: $0.subject), $0) }) { _, last in last }
        state.withLock { state in
            guard state.localChanges == mark else { return }
            state.active = active
            state.isLoaded = true
        }
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
        state.withLock { state in
            state.active[Key(kind: revocation.kind, subject: revocation.subject)] = revocation
            state.localChanges += 1
        }
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
        state.withLock { state in
            state.active[Key(kind: kind, subject: subject)] = nil
            state.localChanges += 1
        }
        return !found.isEmpty
    }
}
