import Foundation
import GRDB
import SyncProtocol

/// How a page's rows map onto a local table; handed to the decoder so rows decode straight into
/// SQLite values, column by column, without an intermediate JSON tree.
final class PageLayout: Sendable {
    static let userInfoKey = CodingUserInfoKey(rawValue: "todosync.pageLayout")!

    let columns: [TableDescription.Column]
    let keys: [DynamicKey]

    init(_ table: TableDescription) {
        columns = table.allColumns
        keys = columns.map { DynamicKey(stringValue: $0.name) }
    }

    /// The column indexes of `id`, `updatedAt`, `deleted` (fixed by ``TableDescription/allColumns``).
    static let idIndex = 0
    static let versionIndex = 1
    static let updatedAtIndex = 3
    static let deletedIndex = 4

    /// Decodes a page body: a JSON array, or `{"results": [...]}`.
    func decode(_ data: Data) throws(SyncError) -> [PulledRow] {
        let decoder = JSONDecoder()
        decoder.userInfo[Self.userInfoKey] = self
        do {
            return try decoder.decode([PulledRow].self, from: data)
        } catch {
            if let wrapped = try? decoder.decode(Wrapped.self, from: data) { return wrapped.results }
            throw .badResponse("a page of rows is not a JSON array of items (\(Self.explain(error)))")
        }
    }

    /// Where and why a page did not decode, in words ("row 3, 'complete': expected a boolean").
    static func explain(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "unreadable JSON" }
        func place(_ path: [any CodingKey]) -> String {
            let parts = path.map { key in key.intValue.map { "row \($0 + 1)" } ?? "'\(key.stringValue)'" }
            return parts.isEmpty ? "the body" : parts.joined(separator: ", ")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return
                "\(place(context.codingPath)): expected \(type == Bool.self ? "a boolean" : type == String.self ? "text" : "a \(type)")"
        case .valueNotFound(_, let context), .keyNotFound(_, let context):
            return "\(place(context.codingPath)): a value is missing"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(place(context.codingPath)): unreadable"
        @unknown default:
            return "unreadable JSON"
        }
    }

    /// Decodes one item (a single-item answer); nil unless it is an object with `id` and `version`.
    func decodeItem(_ data: Data) -> PulledRow? {
        let decoder = JSONDecoder()
        decoder.userInfo[Self.userInfoKey] = self
        guard let row = try? decoder.decode(PulledRow.self, from: data), row.id != nil,
            !row.values[Self.versionIndex].isNull
        else { return nil }
        return row
    }

    /// Decodes a page body and the total the service gave with it (`{"results": [...], "count": N}`
    /// when asked with `$inlinecount=allpages`), if any.
    func decodeCounted(_ data: Data) throws(SyncError) -> (rows: [PulledRow], count: Int?) {
        let decoder = JSONDecoder()
        decoder.userInfo[Self.userInfoKey] = self
        if let wrapped = try? decoder.decode(Wrapped.self, from: data) { return (wrapped.results, wrapped.count) }
        return (try decode(data), nil)
    }

    private struct Wrapped: Decodable {
        var results: [PulledRow]
        var count: Int?
    }
}

struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// One row of a pulled page, as the SQLite values of the local table's columns.
struct PulledRow: Decodable, Sendable {
    var values: [DatabaseValue]

    var id: String? { String.fromDatabaseValue(values[PageLayout.idIndex]) }
    var updatedAt: String? { String.fromDatabaseValue(values[PageLayout.updatedAtIndex]) }
    var deleted: Bool { (Int64.fromDatabaseValue(values[PageLayout.deletedIndex]) ?? 0) != 0 }

    init(from decoder: any Decoder) throws {
        guard let layout = decoder.userInfo[PageLayout.userInfoKey] as? PageLayout else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no page layout"))
        }
        let container = try decoder.container(keyedBy: DynamicKey.self)
        var values: [DatabaseValue] = []
        values.reserveCapacity(layout.columns.count)
        for (index, column) in layout.columns.enumerated() {
            let key = layout.keys[index]
            do {
                switch column.type {
                case .text:
                    values.append(try container.decodeIfPresent(String.self, forKey: key)?.databaseValue ?? .null)
                case .integer:
                    values.append(try container.decodeIfPresent(Int64.self, forKey: key)?.databaseValue ?? .null)
                case .real:
                    values.append(try container.decodeIfPresent(Double.self, forKey: key)?.databaseValue ?? .null)
                case .boolean:
                    values.append(
                        try container.decodeIfPresent(Bool.self, forKey: key).map { ($0 ? 1 : 0).databaseValue }
                            ?? .null)
                case .json:
                    let value = try container.decodeIfPresent(JSONValue.self, forKey: key)
                    values.append(ColumnValue.database(value, as: .json))
                }
            } catch {
                // A value of another JSON type than the column's: convert it the slow way.
                let value = try container.decodeIfPresent(JSONValue.self, forKey: key)
                values.append(ColumnValue.database(value, as: column.type))
            }
        }
        self.values = values
    }
}
