import SyncProtocol

/// What a column holds, inferred from the first non-null JSON value written into it.
enum ColumnType: String, Sendable {
    case string, number, boolean
    /// Server-set timestamps, stored as integer milliseconds.
    case date
    /// Only nulls so far: the first non-null value fixes the type.
    case unknown

    /// The type a JSON value asks for; `nil` for null, which fits any column.
    init?(of value: JSONValue) {
        switch value {
        case .string: self = .string
        case .number: self = .number
        case .bool: self = .boolean
        case .null, .array, .object: return nil
        }
    }

    /// "strings", "numbers"… for messages.
    var plural: String {
        switch self {
        case .string: "strings"
        case .number: "numbers"
        case .boolean: "booleans"
        case .date: "dates"
        case .unknown: "nulls"
        }
    }
}

/// One column of a table, as stored.
struct Column: Sendable, Equatable {
    let name: String
    var type: ColumnType
    let isSystem: Bool
    /// The type a schema file declares (stores never set it; queries learn it from the declaration).
    var declared: DeclaredType? = nil
}

/// The columns of one table: the system columns first, then the user columns in creation order.
/// Names are matched case-insensitively, as SQLite does.
struct TableSchema: Sendable {
    /// The table's name as first written.
    let name: String
    private(set) var columns: [Column]
    private var positions: [String: Int]
    /// The columns quoted and comma-separated, in order (`"id", "createdAt", …`): the select list
    /// of every item read. Built when the columns change, not per request.
    private(set) var selectList: String

    static let systemColumns: [Column] = [
        Column(name: SystemColumn.id, type: .string, isSystem: true),
        Column(name: SystemColumn.createdAt, type: .date, isSystem: true),
        Column(name: SystemColumn.updatedAt, type: .date, isSystem: true),
        Column(name: SystemColumn.version, type: .string, isSystem: true),
        Column(name: SystemColumn.deleted, type: .boolean, isSystem: true),
    ]

    init(name: String, userColumns: [Column] = []) {
        self.name = name
        columns = Self.systemColumns + userColumns
        positions = [:]
        for (index, column) in columns.enumerated() { positions[column.name.lowercased()] = index }
        selectList = columns.map { SQLDialect.quoted($0.name) }.joined(separator: ", ")
    }

    /// The column called `name` (any case), or `nil`.
    func column(named name: String) -> Column? {
        positions[name.lowercased()].map { columns[$0] }
    }

    /// The position of the column in ``columns`` (and in every row this store selects).
    func position(of name: String) -> Int? {
        positions[name.lowercased()]
    }

    var userColumns: ArraySlice<Column> {
        columns[Self.systemColumns.count...]
    }

    /// All column names, for messages.
    var columnList: String {
        columns.map(\.name).joined(separator: ", ")
    }

    mutating func add(_ column: Column) {
        positions[column.name.lowercased()] = columns.count
        columns.append(column)
        selectList += ", " + SQLDialect.quoted(column.name)
    }

    mutating func setType(_ type: ColumnType, of name: String) {
        guard let index = positions[name.lowercased()] else { return }
        columns[index].type = type
    }
}
