import Foundation
import GRDB
import SyncProtocol

/// A list request ready to run: parameterised SQL for the page (and the count), and the columns
/// to put in the answer.
struct CompiledQuery {
    let schema: TableSchema
    let selectSQL: String
    let selectArguments: StatementArguments
    let countSQL: String?
    let countArguments: StatementArguments
    /// The columns asked for with `$select` (canonical names), or `nil` for all.
    let selection: Set<String>?
}

/// Checks query options against a table's columns and builds the SQL.
enum QueryCompiler {
    /// Compiles `options` for `schema`; names are resolved with `resolve` (which knows the protocol
    /// style: `__updatedAt` is `updatedAt` in the legacy protocol). Unknown names are a 400.
    /// With an owner's `scope`, every row (and the count) is restricted to that owner's.
    static func compile(
        _ options: QueryOptions, schema: TableSchema, resolve: @escaping (String) -> Column?, scope: RowScope = .all
    ) throws(TableError) -> CompiledQuery {
        var conditions: [String] = []
        var arguments: [DatabaseValue] = []
        if let owner = scope.owner {
            conditions.append("\(RowScope.ownerColumn.quotedDatabaseIdentifier) = ?")
            arguments.append(owner.databaseValue)
        }
        if let filter = options.filter {
            let expression = try FilterParser.parse(filter)
            let compiler = FilterCompiler(resolve: resolve, schema: schema)
            let compiled = try compiler.compile(expression)
            conditions.append(compiled.sql)
            arguments += compiled.arguments
            if let bound = compiler.updatedAtLowerBound(expression) {
                conditions.append("\"updatedAt\" >= ?")
                arguments.append(bound.databaseValue)
            }
        }
        if !options.includeDeleted { conditions.append("\"deleted\" = 0") }
        let table = schema.name.quotedDatabaseIdentifier
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")

        let order = try orderClause(options.orderBy, schema: schema, resolve: resolve)
        let columns = TableStore.columnList(schema)
        // With an offset, SQLite steps over every skipped row; picking the page's rowids first lets it
        // step over index entries only (the (updatedAt, id, deleted) index covers pulls and plain lists), not whole rows.
        let selectSQL =
            options.skip > 0
            ? "SELECT \(columns) FROM \(table) WHERE rowid IN (SELECT rowid FROM \(table)\(whereClause) "
                + "ORDER BY \(order) LIMIT ? OFFSET ?) ORDER BY \(order)"
            : "SELECT \(columns) FROM \(table)\(whereClause) ORDER BY \(order) LIMIT ? OFFSET ?"
        var selection: Set<String>?
        if let select = options.select {
            selection = try Set(names(in: select, option: "$select", schema: schema, resolve: resolve).map(\.name))
        }
        return CompiledQuery(
            schema: schema, selectSQL: selectSQL,
            selectArguments: StatementArguments(arguments + [options.top.databaseValue, options.skip.databaseValue]),
            countSQL: options.inlineCount ? "SELECT count(*) FROM \(table)\(whereClause)" : nil,
            countArguments: StatementArguments(arguments), selection: selection)
    }

    /// `ORDER BY` for `$orderby`, always ending in `id` so that pages are stable; without `$orderby`,
    /// rows come in the order they were first inserted.
    private static func orderClause(
        _ orderBy: String?, schema: TableSchema, resolve: (String) -> Column?
    )
        throws(TableError) -> String
    {
        guard let orderBy else { return "rowid" }
        var keys: [String] = []
        var usesID = false
        var lastDescending = false
        for part in orderBy.split(separator: ",", omittingEmptySubsequences: false) {
            let words = part.split(whereSeparator: \.isWhitespace)
            guard (1...2).contains(words.count) else {
                throw TableError.invalidQuery(
                    "$orderby must be a comma-separated list of 'column [asc|desc]'; '\(part)' is not.")
            }
            let column = try self.column(String(words[0]), option: "$orderby", schema: schema, resolve: resolve)
            var descending = false
            if words.count == 2 {
                switch words[1].lowercased() {
                case "asc": descending = false
                case "desc": descending = true
                default:
                    throw TableError.invalidQuery(
                        "$orderby accepts 'asc' or 'desc' after a column; '\(words[1])' is neither.")
                }
            }
            if column.name == SystemColumn.id { usesID = true }
            lastDescending = descending
            keys.append(column.name.quotedDatabaseIdentifier + (descending ? " DESC" : ""))
        }
        if !usesID { keys.append("\"id\"" + (lastDescending ? " DESC" : "")) }
        return keys.joined(separator: ", ")
    }

    private static func names(
        in list: String, option: String, schema: TableSchema, resolve: (String) -> Column?
    )
        throws(TableError) -> [Column]
    {
        var columns: [Column] = []
        for part in list.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            if name == "*" { return schema.columns }
            columns.append(try column(name, option: option, schema: schema, resolve: resolve))
        }
        return columns
    }

    private static func column(
        _ name: String, option: String, schema: TableSchema, resolve: (String) -> Column?
    )
        throws(TableError) -> Column
    {
        guard let column = resolve(name) else {
            throw TableError.invalidQuery(
                "\(option) names an unknown column '\(name)'; the columns of table '\(schema.name)' are \(schema.columnList)."
            )
        }
        return column
    }
}
