import Foundation
import GRDB
import SyncProtocol

/// How one row compares between the local table and the service: a pure function from both copies,
/// the row's queued change and the table's pull token to a difference (or none).
enum RowComparison {
    /// What verify reads of a copy: enough to tell two copies apart.
    struct Copy: Sendable, Hashable {
        var version: String?
        var updatedAt: String?
        var deleted = false
        /// The row's values as the local table holds them, in the order of its columns
        /// (``TableDescription/allColumns``, as a ``PageLayout`` decodes a page); nil: not read, such as
        /// a local row the service lacks. Its system columns are left out of the comparison.
        var values: [DatabaseValue]?
        /// Members the table has no column for, or that do not fit their column's type yet (a pulled
        /// row's ``PulledRow/extras``): compared as they are.
        var extras: [String: JSONValue] = [:]

        init(
            version: String? = nil, updatedAt: String? = nil, deleted: Bool = false, values: [DatabaseValue]? = nil,
            extras: [String: JSONValue] = [:]
        ) {
            self.version = version
            self.updatedAt = updatedAt
            self.deleted = deleted
            self.values = values
            self.extras = extras
        }

        /// The service's copy of a row of a page, decoded as a pull decodes it.
        init(pulled row: PulledRow) {
            self.init(
                version: row.version, updatedAt: row.updatedAt, deleted: row.deleted, values: row.values,
                extras: Dictionary(row.extras, uniquingKeysWith: { _, last in last }))
        }

        /// The local copy of a row read with its table's ``TableDescription/selectList``.
        init(stored values: [DatabaseValue]) {
            self.init(
                version: String.fromDatabaseValue(values[PageLayout.versionIndex]),
                updatedAt: String.fromDatabaseValue(values[PageLayout.updatedAtIndex]), values: values)
        }
    }

    /// The difference between `local` and `service` copies of row `id` of `table` (nil: none, or
    /// neither has it), with its reason: the queued change of the row (`queued`, conflict first),
    /// else whether the service's copy is past `pulledUpTo` (the table's furthest delta token; nil:
    /// never pulled incrementally, so everything on the service is "not pulled yet").
    static func difference(
        id: String, local: Copy?, service: Copy?, queued: OperationState?, pulledUpTo: DeltaToken?,
        table: TableDescription
    ) -> RowDifference? {
        let kind: RowDifference.Kind
        var columns: [String] = []
        switch (local, service) {
        case (nil, nil):
            return nil
        case (nil, .some(let service)):
            guard !service.deleted else { return nil }
            kind = .missingLocally
        case (.some, nil):
            kind = .missingOnService
        case (.some, .some(let service)) where service.deleted:
            kind = .deletedOnService
        case (.some(let local), .some(let service)):
            if local.version == service.version, sameInstant(local.updatedAt, service.updatedAt) {
                columns = differingColumns(local, service, of: table)
                guard !columns.isEmpty else { return nil }
                kind = .differentValues
            } else {
                kind = .differentVersion
            }
        }
        let reason: RowDifference.Reason
        if queued == .conflict {
            reason = .conflict
        } else if queued != nil {
            reason = .pendingChange
        } else if let updatedAt = service?.updatedAt,
            pulledUpTo.map({ $0.isBefore(updatedAt: updatedAt, id: id) }) ?? true
        {
            reason = .notPulledYet
        } else {
            reason = .none
        }
        return RowDifference(
            id: id, kind: kind, reason: reason, localVersion: local?.version, localUpdatedAt: local?.updatedAt,
            serviceVersion: service?.version, serviceUpdatedAt: service?.updatedAt, columns: columns)
    }

    /// The user columns of `table` whose values differ between two copies (none when either copy's
    /// values were not read), in name order. The same SQLite values in every user column (and the
    /// same kept mismatches) are the same values: only a row that differs there, or brings members
    /// the table has no column for, is compared member by member, as JSON values.
    static func differingColumns(_ local: Copy, _ service: Copy, of table: TableDescription) -> [String] {
        guard let mine = local.values, let theirs = service.values else { return [] }
        let user = TableDescription.mismatchesIndex
        if local.extras.isEmpty, service.extras.isEmpty, mine.count == theirs.count, mine.count > user,
            mine[user...] == theirs[user...]
        {
            return []
        }
        return differingColumns(members(local, of: table), members(service, of: table))
    }

    /// A copy's values as the members of an item, its extras included.
    private static func members(_ copy: Copy, of table: TableDescription) -> [String: JSONValue] {
        var item = LocalStore.item(values: copy.values ?? [], table: table)
        for (name, value) in copy.extras { item[name] = value }
        return item
    }

    /// The columns whose values differ, a missing member counting as null; dates compared as instants.
    static func differingColumns(_ local: [String: JSONValue], _ service: [String: JSONValue]) -> [String] {
        Set(local.keys).union(service.keys).filter { name in
            !SystemColumn.all.contains(name) && canonical(local[name] ?? .null) != canonical(service[name] ?? .null)
        }.sorted()
    }

    /// A value as it compares: a date-time text as its instant (precision and zone vary by service).
    private static func canonical(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value, text.utf8.count >= 20,
            text.utf8[text.utf8.index(text.utf8.startIndex, offsetBy: 10)] == UInt8(ascii: "T"),
            let milliseconds = ProtocolDate.parse(text)
        else { return value }
        return .string(ProtocolDate.format(milliseconds: milliseconds))
    }

    /// Whether two `updatedAt` values are the same instant (text may differ in precision or zone).
    static func sameInstant(_ left: String?, _ right: String?) -> Bool {
        guard let left, let right else { return left == right }
        return DeltaToken.compare(left, right) == .orderedSame
    }

    /// The furthest of `tokens` (nil when none has a cursor).
    static func furthest(_ tokens: [DeltaToken]) -> DeltaToken? {
        tokens.filter { $0.updatedAt != nil }.max { earlier, later in
            earlier.isBefore(updatedAt: later.updatedAt!, id: later.id ?? "")
        }
    }
}
