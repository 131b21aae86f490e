import SyncProtocol

/// One change a schema file made to a table, as each store keeps it in `__schema_changes` (one
/// row per table, column, kind and detail: a change is applied once, whatever number of
/// instances start with the file). A change that gives existing rows a new value carries a
/// backfill, which stamps those rows in batches so that incremental pull brings them to every
/// device; its progress (the last id done) is written in the transaction of each batch.
struct SchemaChangeRecord: Sendable, Equatable {
    /// What changed.
    enum Kind: String, Sendable {
        /// The column was first declared; detail: its type (``DeclaredType/recordName``).
        case declared
        /// The declared type widened; detail: the new type, `from` the old one.
        case widened
        /// Rows without a value get one; detail: the default as JSON.
        case defaulted
        /// The column took over another's values; detail: the former name.
        case renamed
        /// The column is kept but left out of answers; detail: empty.
        case retired
    }

    /// Where a backfill stands.
    enum Backfill: Sendable, Equatable {
        /// Nothing to stamp.
        case none
        /// Rows with ids after `after` (all when `nil`) are still to be stamped.
        case pending(after: String?)
        /// Every row is stamped.
        case done
    }

    let table: String
    let column: String
    let kind: Kind
    let detail: String
    /// For ``Kind/widened``: the type before.
    var from: String = ""
    /// Milliseconds since 1970.
    var appliedAt: Int64
    var backfill: Backfill
    /// Rows stamped by its backfill so far.
    var stamped: Int = 0

    /// Whether `other` is the same change (the key the stores keep unique).
    func isSameChange(as other: SchemaChangeRecord) -> Bool {
        table.lowercased() == other.table.lowercased() && column.lowercased() == other.column.lowercased()
            && kind == other.kind && detail == other.detail
    }

    /// What its backfill does to each row it stamps, `nil` when it has none.
    var rowChange: BackfillRowChange? {
        switch kind {
        case .defaulted:
            guard let value = try? OrderedJSONParser.value(Array(detail.utf8)) else { return nil }
            return .fill(value)
        case .renamed: return .stampValues
        case .widened where from == DeclaredType.dateOnly.recordName && detail == DeclaredType.dateTime.recordName:
            return .dateToDateTime
        case .declared, .widened, .retired: return nil
        }
    }

    /// One line for the service page and `--plan`.
    var summary: String {
        switch kind {
        case .declared: "\(table).\(column): declared \(detail)"
        case .widened: "\(table).\(column): widened from \(from) to \(detail)"
        case .defaulted: "\(table).\(column): default \(detail) for rows without a value"
        case .renamed: "\(table).\(column): renamed from \(detail)"
        case .retired: "\(table).\(column): retired (kept, left out of answers, writes ignored)"
        }
    }
}

/// What a backfill does to each row it stamps (besides a new `updatedAt` and `version`).
enum BackfillRowChange: Sendable, Equatable {
    /// Rows whose column is null get the value.
    case fill(JSONValue)
    /// Rows whose column holds a value are stamped as they are (a renamed column).
    case stampValues
    /// Dates (`yyyy-MM-dd`) become the start of their day in UTC.
    case dateToDateTime

    /// The SQL condition of the rows to stamp (`column` quoted).
    func condition(_ column: String) -> String {
        switch self {
        case .fill: "\(column) IS NULL"
        case .stampValues: "\(column) IS NOT NULL"
        case .dateToDateTime: "length(\(column)) = 10"
        }
    }

    /// The SQL assignment of the column, `nil` when its value stays; `?` is the value of ``fill(_:)``.
    func assignment(_ column: String) -> String? {
        switch self {
        case .fill: "\(column) = ?"
        case .stampValues: nil
        case .dateToDateTime: "\(column) = \(column) || 'T00:00:00.000Z'"
        }
    }
}

extension DeclaredType {
    /// The type as `__schema_changes` records it (an enum with its values).
    var recordName: String {
        if case .enumeration(let values) = self { return "enum(" + values.joined(separator: "|") + ")" }
        return name
    }

    /// Whether every value of `old` (a ``recordName``) fits this type, stored as it is or as a
    /// backfill converts it: integer → number, date-only → datetime, an enum → string or an enum
    /// with more values.
    func widens(_ old: String) -> Bool {
        if old == recordName { return true }
        switch self {
        case .number: return old == DeclaredType.integer.recordName
        case .dateTime: return old == DeclaredType.dateOnly.recordName
        case .string: return old.hasPrefix("enum(")
        case .enumeration(let values):
            guard old.hasPrefix("enum("), old.hasSuffix(")") else { return false }
            return old.dropFirst(5).dropLast().split(separator: "|").allSatisfy { values.contains(String($0)) }
        default: return false
        }
    }
}
