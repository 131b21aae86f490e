import Foundation
import SyncProtocol

/// A list request ready to run: parameterised SQL for the page (and the count), in the dialect of
/// the store it was compiled for, and the columns to put in the answer.
struct CompiledQuery: Sendable {
    let schema: TableSchema
    let selectSQL: String
    let selectArguments: [SQLValue]
    let countSQL: String?
    let countArguments: [SQLValue]
    /// The most rows the page holds (`$top`).
    let top: Int
    /// Whether the SQL reads one row more than ``top``, which the stores do not answer but report
    /// as ``TablePage/hasMore``.
    let probesNextRow: Bool
    /// The SQL's `LIMIT`: ``top``, and the probed row.
    var limit: Int { top + (probesNextRow ? 1 : 0) }
    /// The rows to skip (`$skip`).
    let skip: Int
    /// How to start the page after a known row instead of skipping rows, when the order allows it
    /// (PostgreSQL only; see ``PageCursors``).
    let seek: Seek?

    /// A page in `updatedAt, id` or `createdAt, id` order that starts after a given row.
    struct Seek: Sendable {
        /// `updatedAt` or `createdAt`.
        let column: String
        /// The page's SQL; its values are the query's conditions', then the row's `column` and
        /// `id`, the table's name and its count of rewrites, `$top` and the rows to skip after the row.
        let sql: String
    }
    /// The columns asked for with `$select` (canonical names), or `nil` for all.
    let selection: Set<String>?
    /// Where a positional read (a pull) is cut at the store's horizon (PostgreSQL only; see
    /// ``PostgresHorizon``).
    let horizon: Horizon?

    /// The condition `column < ?` of a positional read, its value at `argument` in the select's,
    /// the count's and the seek's arguments (the conditions' values come first in each).
    struct Horizon: Sendable {
        /// `updatedAt` or `createdAt`.
        let column: String
        let argument: Int
    }

    /// `arguments` (the select's, the count's or the seek's) with the horizon's value set.
    func arguments(_ arguments: [SQLValue], horizon value: Int64) -> [SQLValue] {
        guard let horizon else { return arguments }
        var arguments = arguments
        arguments[horizon.argument] = .integer(value)
        return arguments
    }
}

/// Checks query options against a table's columns and builds the SQL for one ``SQLDialect``.
enum QueryCompiler {
    /// Compiles `options` for `schema`; names are resolved with `resolve` (which knows the protocol
    /// style: `__updatedAt` is `updatedAt` in the legacy protocol). Unknown names are a 400.
    ///
    /// With an owner's `scope`, every row (and the count) is restricted to that owner's.
    static func compile(
        _ options: QueryOptions, schema: TableSchema, dialect: SQLDialect, scope: RowScope = .all,
        rules: QueryRules = .mobileApps, resolve: @escaping (String) -> Column?
    ) throws(TableError) -> CompiledQuery {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        var hasUpdatedAtBound = false
        if let owner = scope.owner {
            conditions.append("\(SQLDialect.quoted(RowScope.ownerColumn)) = ?")
            arguments.append(.text(owner))
        }
        if let filter = options.filter {
            let expression = try FilterParser.parse(filter)
            let compiler = FilterCompiler(resolve: resolve, schema: schema, dialect: dialect)
            let compiled = try compiler.compile(expression)
            conditions.append(compiled.sql)
            arguments += compiled.arguments
            if let bound = compiler.updatedAtLowerBound(expression) {
                conditions.append("\"updatedAt\" >= ?")
                arguments.append(.integer(bound))
                hasUpdatedAtBound = true
            }
        }
        if !options.includeDeleted { conditions.append(dialect.liveCondition) }
        let order = try orderClause(
            options.orderBy, schema: schema, dialect: dialect, rules: rules, resolve: resolve)
        var horizon: CompiledQuery.Horizon?
        if dialect == .postgres, let column = positionalColumn(order: order, hasUpdatedAtBound: hasUpdatedAtBound) {
            conditions.append("\(SQLDialect.quoted(column)) < ?")
            arguments.append(.integer(.max))
            horizon = CompiledQuery.Horizon(column: column, argument: arguments.count - 1)
        }
        let table = SQLDialect.quoted(schema.name)
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")

        let columns = schema.columns.map { SQLDialect.quoted($0.name) }.joined(separator: ", ")
        let selectSQL: String
        switch dialect {
        case .sqlite where options.skip > 0:
            // With an offset, SQLite steps over every skipped row; picking the page's rowids first lets it
            // step over index entries only (the (updatedAt, id, deleted) index covers pulls and plain lists),
            // not whole rows.
            selectSQL =
                "SELECT \(columns) FROM \(table) WHERE rowid IN (SELECT rowid FROM \(table)\(whereClause) "
                + "ORDER BY \(order) LIMIT ? OFFSET ?) ORDER BY \(order)"
        case .sqlite:
            selectSQL = "SELECT \(columns) FROM \(table)\(whereClause) ORDER BY \(order) LIMIT ? OFFSET ?"
        case .postgres:
            // Every column, whatever this instance knows of the table: another instance may have added
            // one, and the rows are read by the names PostgreSQL sends with them.
            selectSQL = "SELECT * FROM \(table)\(whereClause) ORDER BY \(order) LIMIT ? OFFSET ?"
        }
        var seek: CompiledQuery.Seek?
        if dialect == .postgres,
            let column = [SystemColumn.updatedAt, SystemColumn.createdAt].first(where: {
                order == "\(SQLDialect.quoted($0)), \"id\""
            })
        {
            let seekConditions =
                conditions + [
                    "(\(SQLDialect.quoted(column)), \"id\") > (?, ?)",
                    "\(PostgresStatement.rewrites(table: "?")) = ?",
                ]
            seek = CompiledQuery.Seek(
                column: column,
                sql: dialect.numberingPlaceholders(
                    "SELECT * FROM \(table) WHERE \(seekConditions.joined(separator: " AND ")) ORDER BY \(order) "
                        + "LIMIT ? OFFSET ?"
                ))
        }
        var selection: Set<String>?
        if let select = options.select {
            selection = try Set(names(in: select, option: "$select", schema: schema, resolve: resolve).map(\.name))
        }
        return CompiledQuery(
            schema: schema, selectSQL: dialect.numberingPlaceholders(selectSQL),
            selectArguments: arguments + [
                .integer(Int64(options.top + (rules.probesNextRow ? 1 : 0))), .integer(Int64(options.skip)),
            ],
            countSQL: options.inlineCount
                ? dialect.numberingPlaceholders("SELECT count(*) FROM \(table)\(whereClause)") : nil,
            countArguments: arguments, top: options.top, probesNextRow: rules.probesNextRow, skip: options.skip,
            seek: seek, selection: selection, horizon: horizon)
    }

    /// The column a list reads positions by, when it is a positional read that a client could page
    /// or pull by: in `updatedAt` or `createdAt` order, or from a lower bound on `updatedAt`.
    private static func positionalColumn(order: String, hasUpdatedAtBound: Bool) -> String? {
        for column in [SystemColumn.updatedAt, SystemColumn.createdAt] where order.hasPrefix(SQLDialect.quoted(column))
        {
            return column
        }
        return hasUpdatedAtBound ? SystemColumn.updatedAt : nil
    }

    /// `ORDER BY` for `$orderby`, always ending in `id` so that pages are stable; without `$orderby`,
    /// rows come in the order `rules` give (first inserted, or by id). An enum column sorts by the
    /// position of its values.
    private static func orderClause(
        _ orderBy: String?, schema: TableSchema, dialect: SQLDialect, rules: QueryRules,
        resolve: (String) -> Column?
    )
        throws(TableError) -> String
    {
        guard let orderBy else {
            switch rules.defaultOrder {
            case .insertion: return dialect.insertionOrder
            case .id: return "\"id\""
            }
        }
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
            var key = sortKey(column) + (descending ? " DESC" : "")
            // SQLite sorts nulls as the smallest values; PostgreSQL as the largest. System columns
            // are never null (and their indexes serve the plain order).
            if dialect == .postgres, !column.isSystem { key += descending ? " NULLS LAST" : " NULLS FIRST" }
            keys.append(key)
        }
        if !usesID { keys.append("\"id\"" + (lastDescending && rules.tieBreakFollowsLastKey ? " DESC" : "")) }
        return keys.joined(separator: ", ")
    }

    /// What a column sorts by: its value, or for an enum the position of its value (the values are
    /// checked to be plain words when the schema is read, so they can be written into the SQL).
    private static func sortKey(_ column: Column) -> String {
        let quoted = SQLDialect.quoted(column.name)
        guard case .enumeration(let values) = column.declared else { return quoted }
        let cases = values.enumerated().map { "WHEN '\($0.element)' THEN \($0.offset)" }.joined(separator: " ")
        return "(CASE \(quoted) \(cases) END)"
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
