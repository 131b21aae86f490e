import Foundation
import GRDB
import SyncProtocol

/// How a page's rows map onto a local table: each item's members become the SQLite values of the
/// table's columns, in ``TableDescription/allColumns`` order; members without a column are ignored.
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
        let page: OrderedJSONParser.Page
        do throws(OrderedJSONParser.Failure) {
            page = try OrderedJSONParser.page(Array(data), maximumDepth: ItemCoding.maximumDepth)
        } catch {
            throw .badResponse("a page of rows is not a JSON array of items (\(error.message))")
        }
        return (page.items.map(row), page.count)
    }

    /// The values of one item's columns.
    private func row(_ members: OrderedJSONParser.Members) -> PulledRow {
        var values = [DatabaseValue](repeating: .null, count: columns.count)
        for member in members {
            guard let position = positions[member.name] else { continue }
            values[position] = ColumnValue.database(member.value, as: columns[position].type)
        }
        return PulledRow(values: values)
    }
}

/// One row of a pulled page, as the SQLite values of the local table's columns.
struct PulledRow: Sendable {
    var values: [DatabaseValue]

    var id: String? { String.fromDatabaseValue(values[PageLayout.idIndex]) }
    var updatedAt: String? { String.fromDatabaseValue(values[PageLayout.updatedAtIndex]) }
    var deleted: Bool { (Int64.fromDatabaseValue(values[PageLayout.deletedIndex]) ?? 0) != 0 }
}
