import Foundation
import GRDB
import Storage
import SyncProtocol

/// The rows' history (`__history`): every local edit, push outcome, decision and pull that touched
/// a row, and the table-wide events (purges, token resets, remote switches), the newest
/// ``retention`` of them (20,000 unless the store says otherwise). The one owner of that table.
///
/// Each event is written by the transaction that does what it tells, so the history never says
/// something happened that did not. A pull page is one event for all its rows (their ids, versions
/// and what the page did to each, in ``PulledRows``): recording a pull costs an insert per page, not
/// per row. A decision refers to its journal entry instead of copying it.
struct HistoryLog: Sendable {
    static let migration = StoreMigration("v8-row-history") { db in
        try db.execute(
            sql: """
                CREATE TABLE __history (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    recordedAt TEXT NOT NULL,
                    tableName TEXT NOT NULL,
                    itemId TEXT,
                    kind TEXT NOT NULL,
                    operationId INTEGER,
                    status INTEGER,
                    version TEXT,
                    previousVersion TEXT,
                    detail TEXT,
                    changes TEXT,
                    journalSequence INTEGER,
                    queryId TEXT,
                    page INTEGER,
                    tokenBefore TEXT,
                    tokenAfter TEXT,
                    rows TEXT
                );
                CREATE INDEX __history_item ON __history (tableName, itemId, sequence) WHERE itemId IS NOT NULL;
                CREATE INDEX __history_table ON __history (tableName, sequence) WHERE itemId IS NULL;
                """)
    }

    /// The newest events kept: 20,000 unless the store says otherwise.
    static let retention = Retention(
        table: "__history", order: "sequence", key: "historyRetention", fallback: 20_000)

    /// Values that look like a JSON Web Token are kept as `[redacted]`, as the flight recorder keeps
    /// them: the history may leave the device in a support bundle.
    private static let redaction = Redaction(secrets: [])

    /// The event kind of a pull page (expanded, per row, into ``HistoryEvent/Kind/pulled`` and its kin).
    private static let pullPageKind = "pull-page"

    // MARK: Recording

    /// A local edit of `itemId`, carried by operation `operationId`: `values` are the columns it
    /// changed, `detail` how it joined the queue.
    func recordEdit(
        _ db: Database, _ kind: OperationKind, table: String, itemId: String, operationId: Int64?, values: Item?,
        detail: String?
    ) throws {
        let eventKind: HistoryEvent.Kind =
            switch kind {
            case .insert: .localInsert
            case .update: .localUpdate
            case .delete: .localDelete
            }
        try db.cachedStatement(
            sql: """
                INSERT INTO __history (recordedAt, tableName, itemId, kind, operationId, changes, detail)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            Timestamp.string(Date()), table, itemId, eventKind.rawValue, operationId,
            values.flatMap { $0.isEmpty ? nil : ItemCoding.encode($0).map(Self.redaction.text) }, detail,
        ])
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    /// An event of queued operation `operationId` (its table and item are read from the queue, so
    /// it must still be queued): a push outcome, a conflict, Cancel or Discard.
    func recordOperation(
        _ db: Database, _ kind: HistoryEvent.Kind, operationId: Int64, status: Int? = nil, version: String? = nil,
        detail: String? = nil
    ) throws {
        // The version it was sent against is the base's; an operation's kind says what it did.
        try db.cachedStatement(
            sql: """
                INSERT INTO __history (recordedAt, tableName, itemId, kind, operationId, status, version,
                    previousVersion, detail)
                SELECT ?, tableName, itemId, ?, id, ?, ?, json_extract(base, '$.version'), coalesce(?, kind)
                FROM __operations WHERE id = ?
                """
        ).execute(arguments: [Timestamp.string(Date()), kind.rawValue, status, version, detail, operationId])
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    /// The journal entry numbered `journalSequence` was just recorded.
    func recordDecision(_ db: Database, journalSequence: Int64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO __history (recordedAt, tableName, itemId, kind, version, journalSequence)
                SELECT recordedAt, tableName, itemId, ?, versionAfter, sequence FROM __journal WHERE sequence = ?
                """
        ).execute(arguments: [HistoryEvent.Kind.decided.rawValue, journalSequence])
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    /// A pull page written into `table`.
    func recordPullPage(
        _ db: Database, table: String, queryId: String?, page: Int, tokenBefore: DeltaToken, tokenAfter: DeltaToken,
        rows: PulledRows
    ) throws {
        guard !rows.isEmpty else { return }
        try db.cachedStatement(
            sql: """
                INSERT INTO __history (recordedAt, tableName, kind, queryId, page, tokenBefore, tokenAfter, rows)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            Timestamp.string(Date()), table, Self.pullPageKind, queryId, page, Self.text(tokenBefore),
            Self.text(tokenAfter), rows.text,
        ])
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    /// A table-wide event: a purge, a token reset, a remote switch.
    func recordTableEvent(_ db: Database, _ kind: HistoryEvent.Kind, table: String, detail: String) throws {
        try db.cachedStatement(
            sql: "INSERT INTO __history (recordedAt, tableName, kind, detail) VALUES (?, ?, ?, ?)"
        ).execute(arguments: [Timestamp.string(Date()), table, kind.rawValue, detail])
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    private static func text(_ token: DeltaToken) -> String? {
        guard let updatedAt = token.updatedAt else { return nil }
        return [updatedAt, token.id ?? token.skip.map { "skip \($0)" }].compactMap { $0 }.joined(separator: " ")
    }

    // MARK: Reading

    /// How many events are kept.
    func retention(_ db: Database) throws -> Int { try Self.retention.count(db) }

    /// Keeps the newest `count` events from now on (and drops older ones at once).
    func setRetention(_ db: Database, _ count: Int) throws { try Self.retention.set(db, count) }

    /// The kept events of `itemId` in `table`, oldest first, with the table-wide events since its first.
    func events(_ db: Database, table: String, itemId: String) throws -> [HistoryEvent] {
        let needle = PulledRows.line(prefixOf: itemId)
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT * FROM __history WHERE tableName = ? AND itemId = ?
                    UNION ALL
                    SELECT * FROM __history WHERE tableName = ? AND itemId IS NULL
                        AND (kind <> ? OR instr(rows, ?) > 0)
                    ORDER BY sequence
                    """),
            arguments: [table, itemId, table, Self.pullPageKind, needle])
        var events: [HistoryEvent] = []
        for row in rows {
            guard let event = try Self.event(row, itemId: itemId, db) else { continue }
            // Table-wide events before the row's first event say nothing about it.
            if event.kind.isTableWide, events.isEmpty { continue }
            events.append(event)
        }
        return events
    }

    private static func event(_ row: Row, itemId: String, _ db: Database) throws -> HistoryEvent? {
        let recordedAt: Date = try StoredValue.time(row, "recordedAt", of: "__history")
        var event = HistoryEvent(
            sequence: row["sequence"], recordedAt: recordedAt, kind: .pulled, operationId: row["operationId"],
            status: row["status"], version: row["version"], previousVersion: row["previousVersion"],
            values: ItemCoding.decode(row["changes"]), detail: row["detail"])
        let kind: String = row["kind"]
        if kind == pullPageKind {
            guard let pulled = PulledRows.entry(of: itemId, in: row["rows"]) else { return nil }
            event.kind = pulled.kind
            event.version = pulled.version
            event.pullPage = HistoryEvent.PullPage(
                queryId: row["queryId"], page: row["page"] ?? 0, tokenBefore: row["tokenBefore"],
                tokenAfter: row["tokenAfter"])
            return event
        }
        event.kind = try StoredValue.known(row, "kind", of: "__history")
        if let sequence: Int64 = row["journalSequence"] {
            event.journalEntry = try ConflictJournal().entry(db, sequence: sequence)
        }
        return event
    }
}

/// The rows of a pull page as the history keeps them: one line per row, `id TAB version TAB what`,
/// where what is `w` (written), `d` (deleted) or `s` (skipped: a local change was queued). Tabs,
/// newlines and backslashes in ids are escaped, so a line is found by its id's prefix.
struct PulledRows: Sendable {
    private(set) var text = ""

    var isEmpty: Bool { text.isEmpty }

    /// Notes what the page did to the row `id` at `version`.
    mutating func append(id: String, version: String?, kind: HistoryEvent.Kind) {
        let mark =
            switch kind {
            case .pulledDelete: "d"
            case .pullSkipped: "s"
            default: "w"
            }
        text += Self.line(prefixOf: id)
        text += Self.escaped(version ?? "")
        text += "\t" + mark
    }

    /// The start of `id`'s line: `\n`, the escaped id, a tab.
    static func line(prefixOf id: String) -> String { "\n" + escaped(id) + "\t" }

    /// What the page did to `id`, and at which version; nil when the page does not hold it.
    static func entry(of id: String, in text: String?) -> (kind: HistoryEvent.Kind, version: String?)? {
        guard let text, let start = text.range(of: line(prefixOf: id)) else { return nil }
        let rest = text[start.upperBound...]
        let line = rest.prefix { $0 != "\n" }
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 2 else { return nil }
        let kind: HistoryEvent.Kind =
            switch fields[1] {
            case "d": .pulledDelete
            case "s": .pullSkipped
            default: .pulled
            }
        return (kind, fields[0].isEmpty ? nil : unescaped(String(fields[0])))
    }

    private static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 9 || $0 == 10 || $0 == 92 }) else { return text }
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func unescaped(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var result = ""
        var escaping = false
        for character in text {
            if escaping {
                result.append(character == "t" ? "\t" : character == "n" ? "\n" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
