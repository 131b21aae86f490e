import Foundation
import GRDB

/// Where an incremental pull of one table and query id stands, as `tokens` lists it.
public struct DeltaTokenState: Sendable, Hashable, Codable {
    /// The table and the pull's query id.
    public var table: String
    public var queryId: String
    /// The cursor: the last row received, by `updatedAt` and id (nil: nothing received yet).
    public var updatedAt: String?
    public var id: String?
    /// When a pull last moved the token, and how many rows the pulls under it brought.
    public var movedAt: Date?
    public var rows: Int
}

/// The one owner of the saved delta tokens: each in `__config` under `deltaToken|table|queryId`
/// as JSON, with its last move and row count under `deltaTokenStats|table|queryId`.
extension LocalStore {
    static func deltaTokenKey(table: String, queryId: String) -> String {
        "deltaToken|\(table)|\(queryId)"
    }

    /// Where a token's last move and row count are kept, beside the token itself.
    static func deltaTokenStatsKey(table: String, queryId: String) -> String {
        "deltaTokenStats|\(table)|\(queryId)"
    }

    /// The token of `table`'s pull `queryId`; nil when none is saved (or it cannot be read).
    func deltaToken(_ db: Database, table: String, queryId: String) throws -> DeltaToken? {
        try config(db, Self.deltaTokenKey(table: table, queryId: queryId)).flatMap(DeltaToken.init(stored:))
    }

    /// Saves the token a pull moved to over `rows` rows, with its last move and row count, in the
    /// caller's transaction (the one that stores the page).
    func saveDeltaToken(_ db: Database, _ token: DeltaToken, table: String, queryId: String, rows: Int) throws {
        try setConfig(db, Self.deltaTokenKey(table: table, queryId: queryId), try token.stored)
        let key = Self.deltaTokenStatsKey(table: table, queryId: queryId)
        let before = try config(db, key).flatMap { Int($0.split(separator: "|").last ?? "") } ?? 0
        try setConfig(db, key, Timestamp.string(Date()) + "|" + String(before + rows))
    }

    /// The saved delta tokens of `table`, one per query id (unreadable ones left out).
    func deltaTokens(_ db: Database, table: String) throws -> [DeltaToken] {
        let prefix = Self.deltaTokenKey(table: table, queryId: "")
        return try String.fetchAll(
            db, sql: "SELECT value FROM __config WHERE substr(key, 1, ?) = ?", arguments: [prefix.count, prefix]
        ).compactMap(DeltaToken.init(stored:))
    }

    /// Every saved token with its last move and rows, by table then query id.
    func deltaTokenStates(_ db: Database) throws -> [DeltaTokenState] {
        var states: [DeltaTokenState] = []
        for row in try Row.fetchAll(
            db, sql: "SELECT key, value FROM __config WHERE substr(key, 1, 11) = 'deltaToken|' ORDER BY key")
        {
            let parts = (row["key"] as String).split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let (table, queryId) = (String(parts[1]), String(parts[2]))
            let token = DeltaToken(stored: row["value"])
            let stats = try config(db, Self.deltaTokenStatsKey(table: table, queryId: queryId))?
                .split(separator: "|")
            states.append(
                DeltaTokenState(
                    table: table, queryId: queryId, updatedAt: token?.updatedAt, id: token?.id,
                    movedAt: stats?.first.flatMap { Timestamp.date(String($0)) },
                    rows: stats?.last.flatMap { Int($0) } ?? 0))
        }
        return states
    }

    /// Forgets the delta tokens of `table` (nil: of every table): its next pulls fetch every row.
    func removeDeltaTokens(_ db: Database, table: String? = nil) throws {
        for prefix in [
            table.map { Self.deltaTokenKey(table: $0, queryId: "") } ?? "deltaToken|",
            table.map { Self.deltaTokenStatsKey(table: $0, queryId: "") } ?? "deltaTokenStats|",
        ] {
            try db.execute(
                sql: "DELETE FROM __config WHERE substr(key, 1, ?) = ?", arguments: [prefix.count, prefix])
        }
    }

    /// Forgets the token (and its counts) of `table` and `queryId`, or every token of `table` when
    /// `queryId` is nil.
    func removeDeltaToken(_ db: Database, table: String, queryId: String?) throws {
        guard let queryId else { return try removeDeltaTokens(db, table: table) }
        try setConfig(db, Self.deltaTokenKey(table: table, queryId: queryId), nil)
        try setConfig(db, Self.deltaTokenStatsKey(table: table, queryId: queryId), nil)
    }

    /// Forgets the token of `table`'s pull `queryId` (nil: every query id of the table), as a person
    /// asked: the history records it.
    func resetDeltaTokens(_ db: Database, table: String, queryId: String?) throws {
        try removeDeltaToken(db, table: table, queryId: queryId)
        try HistoryLog().recordTableEvent(
            db, .tokenReset, table: table, detail: queryId.map { "query id \($0)" } ?? "every query id")
    }
}
