import Storage
import SyncProtocol

/// The local shape of one synced table: its name and its user columns.
///
/// The system columns (`id`, `version`, `createdAt`, `updatedAt`, `deleted`) are added to every table;
/// list only the columns the application owns. Columns the service sends that the table lacks are
/// added to it, typed from their values (see ``ColumnType``), by the transaction that stores them.
public struct TableDescription: Sendable, Hashable {
    /// The SQLite type a column is stored as, and how its values map to JSON.
    public enum ColumnType: String, Sendable, Hashable, Codable {
        /// `TEXT`; JSON strings.
        case text
        /// `INTEGER`; JSON numbers without a fraction.
        case integer
        /// `REAL`; any JSON number.
        case real
        /// `INTEGER` holding 0 or 1; JSON booleans.
        case boolean
        /// `TEXT` holding JSON; any JSON value (arrays, objects).
        case json
        /// `TEXT` holding the protocol's dates: ISO 8601 UTC with milliseconds (`2026-11-21T23:02:54.020Z`).
        case date
        /// No value but null seen yet: the first other value gives the column its type.
        case null

        /// Whether `value` fits this type as it is (null fits every type); a value that does not is
        /// kept exactly and flagged (see ``TableDescription/mismatchedColumns(of:)``).
        public func fits(_ value: JSONValue) -> Bool { ColumnValue.fits(value, self) }

        var sqlType: String {
            switch self {
            case .text, .json, .date: "TEXT"
            case .integer, .boolean: "INTEGER"
            case .real: "REAL"
            case .null: ""
            }
        }
    }

    /// One user column.
    public struct Column: Sendable, Hashable {
        /// The column's name (letters, digits, underscores).
        public var name: String
        /// How it is stored.
        public var type: ColumnType

        /// A column named `name` of `type`.
        public init(_ name: String, _ type: ColumnType) {
            self.name = name
            self.type = type
        }
    }

    /// The table's name, locally and on the server (`/tables/{name}`).
    public var name: String { didSet { derived = Derived(name: name, columns: columns) } }
    /// The user columns, in the order they are created.
    public var columns: [Column] { didSet { derived = Derived(name: name, columns: columns) } }
    /// What every read and write of a row needs, worked out once per description.
    private var derived: Derived

    /// Describes a table; names must not start with `__` (reserved for the store's own tables).
    /// System columns and the store's own ``mismatchesColumn`` in `columns` are left out.
    public init(name: String, columns: [Column]) {
        self.name = name
        var seen: Set<String> = []
        self.columns = columns.filter {
            !SystemColumn.all.contains($0.name) && Self.canBeColumn($0.name) && seen.insert($0.name).inserted
        }
        derived = Derived(name: name, columns: self.columns)
    }

    /// The tutorial's todo table: `text` and `complete`.
    public static let todoItem = TableDescription(
        name: "todoitem", columns: [Column("text", .text), Column("complete", .boolean)])

    /// The user column names.
    public var columnNames: [String] { columns.map(\.name) }

    /// Checks that `name` can be a table's name: 1 to 64 ASCII letters, digits and underscores, not
    /// starting with a digit or with `__`; else ``SyncError/invalidTableName(_:)``.
    public static func checkName(_ name: String) throws(SyncError) {
        try LocalStore.checkTableName(name)
    }

    /// The store's own column of every data table: the values kept exactly because they do not fit
    /// their column's type, as a JSON object by column name (NULL when none). A service column of this
    /// name (not a valid name on a todosync service) is not stored.
    public static let mismatchesColumn = ":mismatches"

    /// Whether a member named `name` can be a column of the local table. `rowid`, `oid` and `_rowid_`
    /// (any case) would hide SQLite's row id, which lists page by, and ``mismatchesColumn`` is the
    /// store's own: members of those names are kept exactly in ``mismatchesColumn`` instead.
    public static func canBeColumn(_ name: String) -> Bool {
        name != mismatchesColumn && !["rowid", "oid", "_rowid_"].contains(name.lowercased())
    }

    /// Where ``mismatchesColumn`` is in ``allColumns``: after the system columns.
    static let mismatchesIndex = 5

    /// The type of the user column `name`, nil when the table has none of that name.
    public func columnType(_ name: String) -> ColumnType? {
        columns.first { $0.name == name }?.type
    }

    /// The user columns of `item` whose value does not fit the column's type (kept exactly, flagged),
    /// in column order.
    public func mismatchedColumns(of item: Item) -> [String] {
        columns.filter { column in
            guard let value = item[column.name] else { return false }
            return !ColumnValue.fits(value, column.type)
        }.map(\.name)
    }

    /// Every column of the local table, system columns first, then ``mismatchesColumn``.
    var allColumns: [Column] { derived.allColumns }

    /// `allColumns` quoted for a `SELECT`, in their order; ``LocalStore/item(from:table:)`` reads them by position.
    var selectList: String { derived.selectList }

    /// Inserts a row given in the order of ``allColumns``, or changes the row with its id in place.
    /// Unlike `INSERT OR REPLACE`, the row keeps its rowid (its place in lists and the search index)
    /// and the update triggers run.
    var upsertSQL: String { upsertSQL(rows: 1) }

    /// ``upsertSQL`` for `rows` rows at once (their values one row after the other). Rows are
    /// written in order: a later row of the same id changes the one written before it.
    func upsertSQL(rows: Int) -> String {
        derived.upsertHead + Array(repeating: derived.upsertRow, count: rows).joined(separator: ", ")
            + derived.upsertTail
    }

    /// For `rows` rows given like ``upsertSQL(rows:)``'s: sets the system columns but `id` of each row whose
    /// user columns hold the values given, and returns the ids of the rows it set.
    func adoptionSQL(rows: Int) -> String {
        derived.adoptionHead + Array(repeating: derived.upsertRow, count: rows).joined(separator: ", ")
            + derived.adoptionTail
    }

    private struct Derived: Sendable, Hashable {
        let allColumns: [Column]
        let selectList: String
        let upsertHead: String
        let upsertRow: String
        let upsertTail: String
        let adoptionHead: String
        let adoptionTail: String

        init(name: String, columns: [Column]) {
            allColumns =
                [
                    Column(SystemColumn.id, .text), Column(SystemColumn.version, .text),
                    Column(SystemColumn.createdAt, .text), Column(SystemColumn.updatedAt, .text),
                    Column(SystemColumn.deleted, .boolean), Column(TableDescription.mismatchesColumn, .json),
                ] + columns
            let quoted = allColumns.map(\.name.quotedSQLName)
            selectList = quoted.joined(separator: ", ")
            let updates = quoted.filter { $0 != SystemColumn.id.quotedSQLName }.map {
                "\($0) = excluded.\($0)"
            }
            upsertHead = "INSERT INTO \(name.quotedSQLName) (\(selectList)) VALUES "
            upsertRow = "(" + sqlParameters(quoted.count) + ")"
            upsertTail = " ON CONFLICT(id) DO UPDATE SET " + updates.joined(separator: ", ")
            // `answer.columnN` is the Nth value of a row, in the order of `allColumns`.
            let table = name.quotedSQLName
            let answer = allColumns.enumerated().map { "answer.column\($0.offset + 1)" }
            let userColumns = allColumns.count - columns.count
            let sets = 1..<userColumns
            let compared = userColumns..<allColumns.count
            adoptionHead =
                "UPDATE \(table) SET " + sets.map { "\(quoted[$0]) = \(answer[$0])" }.joined(separator: ", ")
                + " FROM (VALUES "
            adoptionTail =
                ") AS answer WHERE \(table).id = answer.column1"
                + compared.map { " AND \(table).\(quoted[$0]) IS \(answer[$0])" }.joined() + " RETURNING id"
        }
    }

    func type(of column: String) -> ColumnType? {
        allColumns.first { $0.name == column }?.type
    }
}
