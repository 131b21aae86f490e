import Foundation
import SyncProtocol

/// One table of a schema file: its declared columns and how it pages and deletes. Columns the
/// file does not name stay dynamic (typed by their first value), as in undeclared tables.
public struct TableDeclaration: Sendable, Equatable {
    /// One declared column, and the changes the file makes to it.
    public struct DeclaredColumn: Sendable, Equatable {
        public let name: String
        let type: DeclaredType
        /// The value rows that lack one get (`"default"`): new rows at insert, existing ones by a
        /// backfill that goes out through the incremental pull.
        var defaultValue: JSONValue? = nil
        /// The column's former name (`"renamedFrom"`): writes under it are stored under ``name``.
        var renamedFrom: String? = nil
        /// Kept in the database, left out of answers; writes to it are ignored (`"retired": true`).
        var retired = false
        /// The line of the schema file that declares it, for messages (0 when unknown).
        var line = 0
    }

    public let name: String
    /// Rows per page when a query has no `$top` (and, in v3, the most a page holds); `nil` is the service's.
    public let pageSize: Int?
    /// Whether DELETE marks rows deleted (kept for incremental pull, hidden from queries) or
    /// removes them. Undeclared tables soft-delete.
    public let softDelete: Bool
    /// Whether a v3 PUT sets the columns its body leaves out to null (the Datasync toolkit's
    /// replace). By default they keep their values: an app that does not know a column (an older
    /// version still in the field) never erases it.
    public let putReplaces: Bool
    /// The declared columns, by name.
    public let columns: [DeclaredColumn]

    /// The declared column called `name` (any case).
    func column(named name: String) -> DeclaredColumn? {
        columns.first { $0.name.lowercased() == name.lowercased() }
    }

    /// One value of each declared column's stored type, in column order: what
    /// ``TableSchema/changes(for:)`` reads to create the columns (nothing is written).
    var typeWitnesses: [StoredItem.Field] {
        columns.filter { !$0.retired }.map { column in
            let value: JSONValue =
                switch column.type.storage {
                case .number: .number(0)
                case .boolean: .bool(false)
                case .string, .date, .unknown: .string("")
                }
            return StoredItem.Field(name: column.name, value: value)
        }
    }

    /// Checks that the declared columns fit the columns `stored` already has (a column that has
    /// held only nulls fits any type).
    func checkFits(_ stored: TableSchema) throws(ServiceSchemaError) {
        for column in columns {
            guard let existing = stored.column(named: column.name), existing.type != .unknown else { continue }
            if existing.type != column.type.storage {
                throw ServiceSchemaError(
                    "Table '\(name)', column '\(column.name)': the schema declares \(column.type.name), but the table "
                        + "already holds \(existing.type.plural) in it. Change the schema, or move the data to "
                        + "another column.")
            }
        }
    }

    /// Checks the fields of a write against the declared columns, storing dates and times in
    /// their canonical form; a value that does not fit is a 400 naming the column.
    func check(_ fields: inout [StoredItem.Field]) throws(TableError) {
        for (index, field) in fields.enumerated() {
            guard let column = column(named: field.name) else { continue }
            guard let stored = column.type.stored(field.value) else {
                throw .invalidRequest(
                    "The column '\(column.name)' of table '\(name)' holds \(column.type.expectation) (or null); "
                        + "this request sends \(field.value.jsonText). Send a value of that type.")
            }
            fields[index] = StoredItem.Field(name: field.name, value: stored)
        }
    }
}

/// The tables a schema file declares, read and checked when the service starts.
///
/// ```json
/// {"movies": {"pageSize": 100, "softDelete": false, "putReplaces": false,
///             "columns": {"title": "string", "rating": {"enum": ["G", "PG", "R"]}}}}
/// ```
/// Column types: `string`, `integer`, `number`, `boolean`, `datetime`, `date-only`,
/// `time-of-day` and `{"enum": [values in order]}`. Columns are created in name order.
public struct ServiceSchema: Sendable, Equatable {
    public let tables: [TableDeclaration]

    public init(tables: [TableDeclaration] = []) {
        self.tables = tables
    }

    /// The declaration of `table` (any case), `nil` for an undeclared table.
    func declaration(of table: String) -> TableDeclaration? {
        tables.first { $0.name.lowercased() == table.lowercased() }
    }

    /// Reads a schema file's JSON; the error names the table and column at fault.
    public init(json data: Data) throws(ServiceSchemaError) {
        let members: OrderedJSONParser.Members
        do {
            members = try OrderedJSONParser.object(Array(data))
        } catch {
            throw ServiceSchemaError("The schema is not a JSON object of tables (\(error.message)).")
        }
        let lines = SchemaFileLines(data)
        var tables: [TableDeclaration] = []
        for (name, value) in members {
            tables.append(try Self.table(name, value, lines: lines))
        }
        self.tables = tables
    }

    private static func table(
        _ name: String, _ value: JSONValue, lines: SchemaFileLines
    ) throws(ServiceSchemaError) -> TableDeclaration {
        guard TableService.isValidTableName(name) else {
            throw ServiceSchemaError(
                "Table '\(name)': not a table name; use letters, digits and underscores, starting with a letter.")
        }
        guard case .object(let settings) = value else {
            throw ServiceSchemaError("Table '\(name)': give an object such as {\"columns\": {\"title\": \"string\"}}.")
        }
        for key in settings.keys where !["pageSize", "softDelete", "putReplaces", "columns"].contains(key) {
            throw ServiceSchemaError(
                "Table '\(name)': unknown setting '\(key)'; use pageSize, softDelete, putReplaces and columns.")
        }
        var pageSize: Int?
        if let size = settings["pageSize"] {
            guard case .number(let number) = size, number.rounded() == number, (1...128_000).contains(number) else {
                throw ServiceSchemaError("Table '\(name)': pageSize must be a whole number from 1 to 128000.")
            }
            pageSize = Int(number)
        }
        var softDelete = true
        if let flag = settings["softDelete"] {
            guard case .bool(let value) = flag else {
                throw ServiceSchemaError("Table '\(name)': softDelete must be true or false.")
            }
            softDelete = value
        }
        var putReplaces = false
        if let flag = settings["putReplaces"] {
            guard case .bool(let value) = flag else {
                throw ServiceSchemaError("Table '\(name)': putReplaces must be true or false.")
            }
            putReplaces = value
        }
        var columns: [TableDeclaration.DeclaredColumn] = []
        if let list = settings["columns"] {
            guard case .object(let declared) = list else {
                throw ServiceSchemaError("Table '\(name)': columns must be an object of column name to type.")
            }
            for columnName in declared.keys.sorted() {
                let line = lines.line(ofColumn: columnName, inTable: name)
                var column: TableDeclaration.DeclaredColumn
                do {
                    column = try Self.column(declared[columnName]!, table: name, columnName)
                } catch {
                    throw ServiceSchemaError(error.description, line: line)
                }
                column.line = line
                columns.append(column)
            }
            try checkRenames(columns, table: name, lines: lines)

        }
        return TableDeclaration(
            name: name, pageSize: pageSize, softDelete: softDelete, putReplaces: putReplaces, columns: columns)
    }

    static func type(
        _ value: JSONValue, table: String, _ column: String
    ) throws(ServiceSchemaError) -> DeclaredType {
        let place = "Table '\(table)', column '\(column)'"
        do {
            try ItemChanges.checkColumnName(column)
        } catch {
            throw ServiceSchemaError("\(place): \(error.message)")
        }
        if SystemColumn.all.contains(where: { $0.lowercased() == column.lowercased() })
            || column.lowercased() == RowScope.ownerColumn
        {
            throw ServiceSchemaError("\(place): the service keeps this column itself; leave it out of the schema.")
        }
        switch value {
        case .string(let name):
            guard let type = DeclaredType(name: name) else {
                throw ServiceSchemaError(
                    "\(place): unknown type '\(name)'; use string, integer, number, boolean, datetime, date-only, "
                        + "time-of-day or {\"enum\": [...]}.")
            }
            return type
        case .object(let object) where object.keys.sorted() == ["enum"]:
            guard case .array(let list) = object["enum"]!, !list.isEmpty else {
                throw ServiceSchemaError(
                    "\(place): enum must list its values in order, such as [\"G\", \"PG\", \"R\"].")
            }
            var values: [String] = []
            for entry in list {
                guard case .string(let text) = entry, Self.isEnumValue(text), !values.contains(text) else {
                    throw ServiceSchemaError(
                        "\(place): enum values must be distinct strings of letters, digits, spaces, '_', '-' and '.'; "
                            + "\(entry) is not.")
                }
                values.append(text)
            }
            return .enumeration(values)
        default:
            throw ServiceSchemaError("\(place): give a type name such as \"string\", or {\"enum\": [...]}.")
        }
    }

    /// Enum values go into the SQL of orderings, so only these characters are allowed.
    private static func isEnumValue(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128
            && text.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                        || " _-.".unicodeScalars.contains(scalar))
            }
    }
}

/// Why a schema file cannot be used; the message names the table and column, and the line of
/// the file when it is known.
public struct ServiceSchemaError: Error, CustomStringConvertible, Equatable {
    public let description: String

    init(_ description: String, line: Int = 0) {
        self.description = line > 0 ? "Line \(line): \(description)" : description
    }
}
