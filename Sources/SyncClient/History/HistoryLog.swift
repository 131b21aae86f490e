import Foundation
import GRDB
import SyncProtocol

/// The rows' history (`__history`): every local edit, push outcome, decision and pull that touched
/// a row, and the table-wide events (purges, token resets, remote switches), the newest
/// ``retention`` of them (20,000 unless the store says otherwise). The one code that reads and writes
/// that table, whose rows and schema are ``HistoryRecord``.
///
/// Each event is written by the transaction that does what it tells, so the history never says
/// something happened that did not. A pull page is one event for all its rows (their ids, versions
/// and what the page did to each, in ``PulledRows``): recording a pull costs an insert per page, not
/// per row. A decision refers to its journal entry instead of copying it.
struct HistoryLog: Sendable {
    /// The newest events kept: 20,000 unless the store says otherwise.
    static let retention = Retention(
        table: HistoryRecord.databaseTableName, order: "sequence", key: "historyRetention", fallback: 20_000)

    /// Values that look like a JSON Web Token are kept as `[redacted]`, as the flight recorder keeps
    /// them: the history may leave the device in a support bundle.
    private static let redaction = Redaction(secrets: [])

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
        try record(
            db,
            HistoryRecord(
                tableName: table, itemId: itemId, kind: eventKind.rawValue, operationId: operationId, detail: detail,
                changes: values.flatMap { $0.isEmpty ? nil : ItemCoding.encode($0).map(Self.redaction.text) }))
    }

    /// Stores `event` and drops the oldest beyond the retention.
    private func record(_ db: Database, _ event: HistoryRecord) throws {
        try event.insert(db)
        try Self.retention.dropBeyond(db, newest: db.lastInsertedRowID)
    }

    /// An event of queued operation `operationId` (its table and item are read from the queue, so
    /// it must still be queued): a push outcome, a conflict, Cancel or Discard.
    func recordOperation(
        _ db: Database, _ kind: HistoryEvent.Kind, operationId: Int64, status: Int? = nil, version: String? = nil,
        detail: String? = nil
    ) throws {
        // The version it was sent against is the base's; an operation's kind says what it did. A
        // copy in SQL (INSERT ... SELECT), as for a decision below: the operation is not decoded.
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
        try record(
            db,
            HistoryRecord(
                tableName: table, kind: HistoryRecord.pullPageKind, queryId: queryId, page: page,
                tokenBefore: Self.text(tokenBefore), tokenAfter: Self.text(tokenAfter), rows: rows.text))
    }

    /// A table-wide event: a purge, a token reset, a remote switch.
    func recordTableEvent(_ db: Database, _ kind: HistoryEvent.Kind, table: String, detail: String) throws {
        try record(db, HistoryRecord(tableName: table, kind: kind.rawValue, detail: detail))
    }

    private static func text(_ token: DeltaToken) -> String? {
        guard let updatedAt = token.updatedAt else { return nil }
        return [updatedAt, token.id ?? token.skip.map { "skip \($0)" }].compactMap { $0 }.joined(separator: " ")
    }

    // MARK: Reading

    /// The kept events of `itemId` in `table`, oldest first, with the table-wide events since its first.
    func events(_ db: Database, table: String, itemId: String) throws -> [HistoryEvent] {
        let needle = PulledRows.line(prefixOf: itemId)
        // In SQL: a UNION ALL lets each half use its own partial index (`__history_item`, `__history_table`).
        let records = try HistoryRecord.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT * FROM __history WHERE tableName = ? AND itemId = ?
                    UNION ALL
                    SELECT * FROM __history WHERE tableName = ? AND itemId IS NULL
                        AND (kind <> ? OR instr(rows, ?) > 0)
                    ORDER BY sequence
                    """),
            arguments: [table, itemId, table, HistoryRecord.pullPageKind, needle])
        var events: [HistoryEvent] = []
        for record in records {
            guard var event = try record.event(of: itemId) else { continue }
            // Table-wide events before the row's first event say nothing about it.
            if event.kind.isTableWide, events.isEmpty { continue }
            if let sequence = record.journalSequence {
                event.journalEntry = try ConflictJournal().entry(db, sequence: sequence)
            }
            events.append(event)
        }
        return events
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
