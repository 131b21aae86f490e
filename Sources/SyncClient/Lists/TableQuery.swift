import GRDB
import SyncProtocol

/// A query over one table: a predicate, a sort and a page. The same value filters the local table
/// (SQL) and the server's rows on pull (OData `$filter`).
///
/// ```swift
/// let open = TableQuery(where: .equal("complete", .bool(false)), orderBy: [.ascending("text")], limit: 50)
/// ```
public struct TableQuery: Sendable, Hashable {
    /// A condition on column values.
    public indirect enum Predicate: Sendable, Hashable {
        case equal(String, JSONValue)
        case notEqual(String, JSONValue)
        case greaterThan(String, JSONValue)
        case greaterOrEqual(String, JSONValue)
        case lessThan(String, JSONValue)
        case lessOrEqual(String, JSONValue)
        /// The text column contains the string (case-insensitive locally).
        case contains(String, String)
        case startsWith(String, String)
        case and([Predicate])
        case or([Predicate])
        case not(Predicate)
    }

    /// One sort key.
    public struct SortKey: Sendable, Hashable {
        /// The column sorted by.
        public var column: String
        /// Smallest first when true.
        public var ascending: Bool

        /// Sorts by `column`, smallest first.
        public static func ascending(_ column: String) -> SortKey { SortKey(column: column, ascending: true) }
        /// Sorts by `column`, largest first.
        public static func descending(_ column: String) -> SortKey { SortKey(column: column, ascending: false) }
    }

    /// Which rows; nil for all.
    public var predicate: Predicate?
    /// The sort (insertion order when empty).
    public var orderBy: [SortKey]
    /// At most this many rows (local queries only; pull pages on its own).
    public var limit: Int?
    /// Rows skipped first (local queries only).
    public var offset: Int?

    /// A query; the defaults select every row.
    public init(where predicate: Predicate? = nil, orderBy: [SortKey] = [], limit: Int? = nil, offset: Int? = nil) {
        self.predicate = predicate
        self.orderBy = orderBy
        self.limit = limit
        self.offset = offset
    }

    /// Every row.
    public static let all = TableQuery()

    // MARK: SQL

    /// `WHERE ...` (or empty) and its arguments, checked against the table's columns.
    func sqlWhere(_ table: TableDescription) throws(SyncError) -> (String, [DatabaseValue]) {
        guard let predicate else { return ("", []) }
        var arguments: [DatabaseValue] = []
        let text = try Self.sql(predicate, table, &arguments)
        return (" WHERE " + text, arguments)
    }

    func sqlOrder(_ table: TableDescription) throws(SyncError) -> String {
        var keys: [String] = []
        for key in orderBy {
            // `rowid` orders by when rows were last written locally.
            guard key.column == "rowid" || table.type(of: key.column) != nil else {
                throw .invalidItem("no column '\(key.column)' to sort by")
            }
            keys.append(key.column.quotedSQLName + (key.ascending ? " ASC" : " DESC"))
        }
        return keys.isEmpty ? " ORDER BY rowid" : " ORDER BY " + keys.joined(separator: ", ")
    }

    func sqlLimit() -> String {
        guard limit != nil || offset != nil else { return "" }
        return " LIMIT \(limit.map { max(0, $0) } ?? -1) OFFSET \(max(0, offset ?? 0))"
    }

    private static func sql(
        _ predicate: Predicate, _ table: TableDescription, _ arguments: inout [DatabaseValue]
    )
        throws(SyncError) -> String
    {
        func column(_ name: String) throws(SyncError) -> (String, TableDescription.ColumnType) {
            guard let type = table.type(of: name) else { throw .invalidItem("no column '\(name)' in '\(table.name)'") }
            return (name.quotedSQLName, type)
        }
        func compare(
            _ name: String, _ op: String, _ value: JSONValue, _ arguments: inout [DatabaseValue]
        )
            throws(SyncError) -> String
        {
            let (quoted, type) = try column(name)
            if value == .null {
                return op == "=" ? "\(quoted) IS NULL" : op == "<>" ? "\(quoted) IS NOT NULL" : "0"
            }
            arguments.append(ColumnValue.queryArgument(value, as: type))
            return "\(quoted) \(op) ?"
        }
        switch predicate {
        case .equal(let name, let value): return try compare(name, "=", value, &arguments)
        case .notEqual(let name, let value):
            let (quoted, _) = try column(name)
            let test = try compare(name, "<>", value, &arguments)
            return value == .null ? test : "(\(test) OR \(quoted) IS NULL)"
        case .greaterThan(let name, let value): return try compare(name, ">", value, &arguments)
        case .greaterOrEqual(let name, let value): return try compare(name, ">=", value, &arguments)
        case .lessThan(let name, let value): return try compare(name, "<", value, &arguments)
        case .lessOrEqual(let name, let value): return try compare(name, "<=", value, &arguments)
        case .contains(let name, let text):
            let (quoted, _) = try column(name)
            arguments.append(("%" + escapeLike(text) + "%").databaseValue)
            return "\(quoted) LIKE ? ESCAPE '\\'"
        case .startsWith(let name, let text):
            let (quoted, _) = try column(name)
            arguments.append((escapeLike(text) + "%").databaseValue)
            return "\(quoted) LIKE ? ESCAPE '\\'"
        case .and(let parts):
            if parts.isEmpty { return "1" }
            var texts: [String] = []
            for part in parts { texts.append(try sql(part, table, &arguments)) }
            return "(" + texts.joined(separator: " AND ") + ")"
        case .or(let parts):
            if parts.isEmpty { return "0" }
            var texts: [String] = []
            for part in parts { texts.append(try sql(part, table, &arguments)) }
            return "(" + texts.joined(separator: " OR ") + ")"
        case .not(let part):
            return "NOT (" + (try sql(part, table, &arguments)) + ")"
        }
    }

    /// `text` for a `LIKE … ESCAPE '\'` pattern: its `\`, `%` and `_` match themselves.
    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }

    // MARK: OData

    /// The predicate as an OData `$filter` expression, nil for all rows.
    var odataFilter: String? {
        predicate.map(Self.odata)
    }

    static func odataLiteral(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number: value.description
        case .string(let text): odataString(text)
        case .array, .object: odataString(value.jsonText)
        }
    }

    static func odataString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    private static func odata(_ predicate: Predicate) -> String {
        switch predicate {
        case .equal(let name, let value): "(\(name) eq \(odataLiteral(value)))"
        case .notEqual(let name, let value): "(\(name) ne \(odataLiteral(value)))"
        case .greaterThan(let name, let value): "(\(name) gt \(odataLiteral(value)))"
        case .greaterOrEqual(let name, let value): "(\(name) ge \(odataLiteral(value)))"
        case .lessThan(let name, let value): "(\(name) lt \(odataLiteral(value)))"
        case .lessOrEqual(let name, let value): "(\(name) le \(odataLiteral(value)))"
        case .contains(let name, let text): "substringof(\(odataString(text)), \(name))"
        case .startsWith(let name, let text): "startswith(\(name), \(odataString(text)))"
        case .and(let parts): parts.isEmpty ? "true" : "(" + parts.map(odata).joined(separator: " and ") + ")"
        case .or(let parts): parts.isEmpty ? "false" : "(" + parts.map(odata).joined(separator: " or ") + ")"
        case .not(let part): "not " + odata(part)
        }
    }
}
