import Foundation
import GRDB
import SyncProtocol

/// How a page's rows map onto a local table: each item's members become the SQLite values of the
/// table's columns, in ``TableDescription/allColumns`` order. A value that does not fit its column's
/// type is kept exactly in the row's ``TableDescription/mismatchesColumn``. Members the table has no
/// column for, and values that widen a column's type, are kept aside (``PulledRow/extras``) for the
/// transaction that writes the page, which adds or widens their columns first.
final class PageLayout: Sendable {
    let columns: [TableDescription.Column]
    /// Each column's position, by name.
    private let positions: [String: Int]

    init(_ table: TableDescription) {
        columns = table.allColumns
        positions = Dictionary(columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The column indexes of `id`, `updatedAt`, `deleted` (fixed by ``TableDescription/allColumns``).
    static let idIndex = 0
    static let versionIndex = 1
    static let updatedAtIndex = 3
    static let deletedIndex = 4

    /// Decodes a page body (a JSON array of items, or `{"results": [...], "count": N}`) and the
    /// total the service gave with it, if any.
    func decode(_ data: Data) throws(SyncError) -> (rows: [PulledRow], count: Int?) {
        var rows: [PulledRow] = []
        var order: [Int] = []
        do throws(OrderedJSONParser.Failure) {
            let count = try OrderedJSONParser.page(Array(data), maximumDepth: ItemCoding.maximumDepth) { members in
                rows.append(row(members, order: &order))
            }
            return (rows, count)
        } catch {
            throw .badResponse("a page of rows is not a JSON array of items (\(error.message))")
        }
    }

    /// The position of the column named `name`, the member at `offset` of its item. A service writes
    /// its rows' members in one order: the position of the previous row's member at `offset` is
    /// checked first, and the lookup by name (hashing the name: 7% of a page's decoding) only when
    /// it is another column.
    private func position(of name: String, at offset: Int, order: inout [Int]) -> Int? {
        if offset < order.count, order[offset] >= 0, columns[order[offset]].name == name { return order[offset] }
        let position = positions[name]
        if offset >= order.count { order.append(contentsOf: repeatElement(-1, count: offset + 1 - order.count)) }
        order[offset] = position ?? -1
        return position
    }

    /// The values of one item's columns; `order` is the column position of each member offset in the
    /// items decoded before.
    private func row(_ members: OrderedJSONParser.Members, order: inout [Int]) -> PulledRow {
        var values = [DatabaseValue](repeating: .null, count: columns.count)
        var mismatches: [String: JSONValue] = [:]
        var extras: [(String, JSONValue)] = []
        for (offset, member) in members.enumerated() {
            guard let position = position(of: member.name, at: offset, order: &order) else {
                if TableDescription.canBeColumn(member.name) {
                    extras.append((member.name, member.value))
                } else if member.name != TableDescription.mismatchesColumn {
                    // `rowid` and the like cannot be columns: kept exactly with the mismatches.
                    mismatches[member.name] = member.value
                }
                continue
            }
            let column = columns[position]
            if position < TableDescription.mismatchesIndex {
                values[position] = ColumnValue.system(member.value, as: column.type)
            } else if position == TableDescription.mismatchesIndex {
                continue
            } else if ColumnValue.widened(column.type, for: member.value) != nil {
                extras.append((member.name, member.value))
            } else if let stored = ColumnValue.stored(member.value, as: column.type) {
                values[position] = stored
            } else {
                mismatches[member.name] = member.value
            }
        }
        if !mismatches.isEmpty {
            values[TableDescription.mismatchesIndex] = JSONValue.object(mismatches).jsonText.databaseValue
        }
        return PulledRow(values: values, extras: extras)
    }
}

/// One row of a pulled page, as the SQLite values of the local table's columns.
struct PulledRow: Sendable {
    var values: [DatabaseValue]
    /// Members that need a new column or a wider type first (see ``PageLayout``); usually none.
    var extras: [(String, JSONValue)] = []

    var id: String? { String.fromDatabaseValue(values[PageLayout.idIndex]) }
    var version: String? { String.fromDatabaseValue(values[PageLayout.versionIndex]) }
    var updatedAt: String? { String.fromDatabaseValue(values[PageLayout.updatedAtIndex]) }
    var deleted: Bool { (Int64.fromDatabaseValue(values[PageLayout.deletedIndex]) ?? 0) != 0 }

    /// The row laid out for `table`, a description with the columns of the layout it was decoded
    /// with and maybe more (added after): the extras go to their columns, or join the kept mismatches.
    func laidOut(for table: TableDescription) -> [DatabaseValue] {
        let all = table.allColumns
        guard values.count != all.count || !extras.isEmpty else { return values }
        var laid = values + Array(repeating: DatabaseValue.null, count: max(0, all.count - values.count))
        guard !extras.isEmpty else { return laid }
        var mismatches: [String: JSONValue] = [:]
        if case .string(let text) = laid[TableDescription.mismatchesIndex].storage,
            case .object(let kept)? = ItemCoding.value(text)
        {
            mismatches = kept
        }
        for (name, value) in extras {
            guard let position = all.firstIndex(where: { $0.name == name }) else {
                mismatches[name] = value
                continue
            }
            if let stored = ColumnValue.stored(value, as: all[position].type) {
                laid[position] = stored
                mismatches[name] = nil
            } else {
                laid[position] = .null
                mismatches[name] = value
            }
        }
        laid[TableDescription.mismatchesIndex] =
            mismatches.isEmpty ? .null : JSONValue.object(mismatches).jsonText.databaseValue
        return laid
    }
}
