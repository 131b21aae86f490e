/// What `todosync serve --schema FILE --plan` prints: the changes the file would make, the rows
/// each backfill would stamp, and a time estimate. Nothing is changed to make it.
public struct SchemaChangeReport: Sendable, CustomStringConvertible {
    /// One change with the rows its backfill would stamp.
    public struct Line: Sendable {
        public let summary: String
        public let rowsToBackfill: Int
    }

    /// Rows per second a backfill is assumed to stamp, for the estimate (a conservative figure
    /// for a local disk; the backfill pauses for no one, but shares the database with writers).
    public static let assumedRowsPerSecond = 20_000

    public let lines: [Line]
    /// Columns renamed in place, as `table.old → table.new`.
    public let renames: [String]

    /// The report of `plan`, with the rows of its change at each index.
    init(_ plan: SchemaChangePlanner.Plan, rows: (Int) -> Int) {
        lines = plan.changes.indices.map { Line(summary: plan.changes[$0].summary, rowsToBackfill: rows($0)) }
        renames = plan.renames.map { "\($0.table).\($0.from) → \($0.table).\($0.to)" }
    }

    public var rowsToBackfill: Int { lines.reduce(0) { $0 + $1.rowsToBackfill } }

    /// Seconds the backfills are estimated to take.
    public var estimatedSeconds: Double { Double(rowsToBackfill) / Double(Self.assumedRowsPerSecond) }

    public var description: String {
        guard !lines.isEmpty else { return "The schema file changes nothing: every change in it is applied." }
        var text = "The schema file would make \(lines.count) change(s):\n"
        for line in lines {
            text += "  - \(line.summary)"
            if line.rowsToBackfill > 0 { text += " — backfill: \(line.rowsToBackfill) row(s) stamped" }
            text += "\n"
        }
        for rename in renames { text += "  column renamed in place: \(rename)\n" }
        let seconds = estimatedSeconds
        text +=
            "Rows to backfill: \(rowsToBackfill) (\(seconds < 1 ? "under a second" : "about \(Int(seconds.rounded(.up))) s") "
            + "at \(Self.assumedRowsPerSecond) rows/s; writers are answered meanwhile, and every device receives "
            + "the new values through incremental pull).\nNothing was changed (--plan)."
        return text
    }
}

extension SchemaChangePlanner {
    /// The SQL counting the rows `change`'s backfill would stamp in `table` as it is before the
    /// plan is applied; `nil` when there are none.
    static func backfillCountSQL(_ change: SchemaChangeRecord, in table: TableSchema?) -> String? {
        guard let rowChange = change.rowChange, let table else { return nil }
        let source = change.kind == .renamed ? change.detail : change.column
        let from = "SELECT count(*) FROM \(SQLDialect.quoted(table.name))"
        guard let column = table.column(named: source) else {
            // A default for a column not made yet: every row lacks a value.
            return change.kind == .defaulted ? from : nil
        }
        return from + " WHERE " + rowChange.condition(SQLDialect.quoted(column.name))
    }
}
