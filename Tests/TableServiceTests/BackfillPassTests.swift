import Testing

@testable import TableService

/// A table's pending backfills run as one pass (one stamp per row), each change from its own
/// cursor, and batches are sized by time.
@Suite("Backfill passes")
struct BackfillPassTests {
    static let schema = TableSchema(
        name: "todo",
        userColumns: [
            Column(name: "title", type: .string, isSystem: false),
            Column(name: "priority", type: .number, isSystem: false),
            Column(name: "due", type: .string, isSystem: false),
        ])

    static func change(
        _ column: String, _ kind: SchemaChangeRecord.Kind, _ detail: String, from: String = "",
        after: String? = nil, table: String = "todo"
    ) -> SchemaChangeRecord {
        SchemaChangeRecord(
            table: table, column: column, kind: kind, detail: detail, from: from, appliedAt: 0,
            backfill: .pending(after: after))
    }

    @Test func theChangesOfATableMakeOnePassAndOtherTablesTheirOwn() {
        let records = [
            Self.change("priority", .defaulted, "3"), Self.change("note", .renamed, "text", table: "other"),
            Self.change("title", .renamed, "text"),
            SchemaChangeRecord(
                table: "todo", column: "estimate", kind: .widened, detail: "number", from: "integer", appliedAt: 0,
                backfill: .none),
        ]
        let passes = BackfillPass.passes(records)
        #expect(passes.map(\.table) == ["todo", "other"])
        #expect(passes[0].changes.map(\.column) == ["priority", "title"], "a change without a backfill is left out")
    }

    @Test func aPassStartsAfterTheSmallestCursorAndFromTheBeginningWhenOneHasNone() {
        let both = BackfillPass(
            table: "todo",
            changes: [
                Self.change("priority", .defaulted, "3", after: "r5"),
                Self.change("title", .renamed, "text", after: "r12"),
            ])
        #expect(both.cursor == "r12", "byte order: \"r12\" < \"r5\"")
        let fresh = BackfillPass(
            table: "todo",
            changes: [Self.change("priority", .defaulted, "3", after: "r5"), Self.change("title", .renamed, "text")])
        #expect(fresh.cursor == nil)
    }

    @Test func eachChangeAppliesOnlyAfterItsOwnCursor() throws {
        let pass = BackfillPass(
            table: "todo",
            changes: [
                Self.change("priority", .defaulted, "3", after: "r5"), Self.change("title", .renamed, "text"),
                Self.change("due", .widened, "datetime", from: "date-only"),
            ])
        let condition = try #require(pass.condition(Self.schema, qualifier: "t."))
        #expect(
            condition.sql
                == #"((t."id" > ? AND t."priority" IS NULL) OR (t."title" IS NOT NULL) OR (length(t."due") = 10))"#)
        #expect(condition.values == [.text("r5")])
        let assignments = pass.assignments(Self.schema, qualifier: "t.")
        #expect(
            assignments.sql
                == #""priority" = CASE WHEN (t."id" > ? AND t."priority" IS NULL) THEN ? ELSE t."priority" END, "#
                + #""due" = CASE WHEN (length(t."due") = 10) THEN t."due" || 'T00:00:00.000Z' ELSE t."due" END"#)
        #expect(assignments.values == [.text("r5"), .integer(3)])
    }

    @Test func batchesGrowAndShrinkTowardTheTargetTimeAtMostTwofoldABatch() {
        var pacer = BackfillPacer()
        #expect(pacer.limit == 256)
        pacer.finished(rows: 256, took: .microseconds(256))  // 1 µs a row: 4,000 rows would take 4 ms
        #expect(pacer.limit == 512)
        pacer.finished(rows: 512, took: .milliseconds(2))  // 4 ms a batch of 1,024
        #expect(pacer.limit == 1024)
        pacer.finished(rows: 1024, took: .milliseconds(4))
        #expect(pacer.limit == 1024)
        pacer.finished(rows: 1024, took: .milliseconds(100))  // a checkpoint: halve, not collapse
        #expect(pacer.limit == 512)
        var fixed = BackfillPacer(fixed: 2)
        fixed.finished(rows: 2, took: .microseconds(1))
        #expect(fixed.limit == 2)
    }

    @Test func writersWaitingShrinkTheBatchesAndTheBackfillRestsAsLongAsEachHeldThem() {
        var pacer = BackfillPacer()
        pacer.finished(rows: 256, took: .microseconds(256))
        pacer.finished(rows: 512, took: .milliseconds(2))
        #expect(pacer.limit == 1024 && pacer.rest == .zero)
        pacer.finished(rows: 1024, took: .milliseconds(4), writersWaited: true)  // 1 ms is 256 rows: halved
        #expect(pacer.limit == 512 && pacer.rest == .milliseconds(4))
        pacer.finished(rows: 512, took: .milliseconds(2), writersWaited: true)
        #expect(pacer.limit == 256 && pacer.rest == .milliseconds(2))
        pacer.finished(rows: 256, took: .milliseconds(1), writersWaited: true)
        #expect(pacer.limit == 256 && pacer.rest == .milliseconds(1))
        pacer.finished(rows: 256, took: .milliseconds(1))  // nobody waited: back toward 4 ms, no rest
        #expect(pacer.limit == 512 && pacer.rest == .zero)
    }
}
