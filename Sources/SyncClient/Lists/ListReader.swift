import GRDB
import SyncProtocol

/// Builds and runs the SQL of one ``ListPage``.
struct ListReader {
    let queue: SyncOperationQueue
    let table: TableDescription
    let request: ListRequest

    private var name: String { table.name.quotedSQLName }

    /// See ``SyncContext/listPage(_:_:)``.
    static func page(
        _ table: String, _ request: ListRequest, queue: SyncOperationQueue
    ) throws(SyncError) -> ListPage {
        let description = try queue.store.description(of: table)
        if let flag = request.flag, description.type(of: flag.column) != .boolean {
            throw .invalidItem("'\(flag.column)' is not a true/false column of \(table)")
        }
        return try queue.store.read { db in
            try ListReader(queue: queue, table: description, request: request).read(db)
        }
    }

    /// Where matching rows are read: FROM, WHERE conditions with their arguments, and the key.
    private struct Source {
        var from: String
        var key: String
        var conditions: [String] = []
        var arguments: [DatabaseValueConvertible?] = []
    }

    /// The sources of the rows the request matches, newest rows first. A search of three
    /// characters or more reads the trigram index and scans the rows the index has not caught up
    /// with yet (all newer than the indexed ones); a shorter one scans newest first until the page
    /// is full.
    private func sources(_ db: Database) throws -> [Source] {
        var sources: [Source] = []
        var main = Source(from: name, key: "\(name).rowid")
        if !request.search.isEmpty {
            guard let listIndex = queue.store.listIndexes[table.name], let index = listIndex.search else { return [] }
            let scanArguments = index.columns.map { _ in request.search as DatabaseValueConvertible? }
            if request.search.count >= 3 {
                let mark = try listIndex.mark(db)
                let pastMark = Source(
                    from: name, key: "\(name).rowid", conditions: ["\(name).rowid > ?", index.scanCondition],
                    arguments: [mark] + scanArguments)
                let fts = index.ftsTable.quotedSQLName
                let (expression, narrowsOnly) = try index.matchExpression(for: request.search, in: db, mark: mark)
                main = Source(
                    from: "\(fts) JOIN \(name) ON \(name).rowid = \(fts).rowid", key: "\(fts).rowid",
                    conditions: ["\(fts).\(fts) MATCH ?"] + (narrowsOnly ? [index.scanCondition] : []),
                    arguments: [expression] + (narrowsOnly ? scanArguments : []))
                sources.append(pastMark)
            } else {
                main.conditions = [index.scanCondition]
                main.arguments = scanArguments
            }
        }
        sources.append(main)
        if let flag = request.flag {
            for index in sources.indices {
                sources[index].conditions.append("coalesce(\(name).\(flag.column.quotedSQLName), 0) = ?")
                sources[index].arguments.append(flag.value ? 1 : 0)
            }
        }
        return sources
    }

    func read(_ db: Database) throws -> ListPage {
        let sources = try sources(db)
        let columns = table.allColumns.map { "\(name).\($0.name.quotedSQLName)" }.joined(separator: ", ")
        func fetch(_ source: Source, _ bound: String?, _ value: Int64?, ascending: Bool, limit: Int) throws -> [Row] {
            let all = source.conditions + (bound.map { ["\(source.key) \($0) ?"] } ?? [])
            let sql =
                "SELECT \(columns), \(source.key) FROM \(source.from)"
                + (all.isEmpty ? "" : " WHERE " + all.joined(separator: " AND "))
                + " ORDER BY \(source.key) \(ascending ? "ASC" : "DESC") LIMIT \(limit)"
            return try Row.fetchAll(
                db.cachedStatement(sql: sql),
                arguments: StatementArguments(source.arguments + (value.map { [$0] } ?? [])))
        }
        // The sources hold disjoint ranges of keys, newest first: their pages are simply concatenated.
        func fetch(_ bound: String?, _ value: Int64?, ascending: Bool, limit: Int) throws -> [Row] {
            var rows: [Row] = []
            for source in ascending ? sources.reversed() : sources where rows.count < limit {
                rows += try fetch(source, bound, value, ascending: ascending, limit: limit - rows.count)
            }
            return rows
        }
        let keyIndex = table.allColumns.count
        let pager = KeysetPager<Row>(
            ascending: false, fetch: { try fetch($0, $1, ascending: $2, limit: $3) }, key: { $0[keyIndex] })
        let position: KeysetPager<Row>.Position =
            switch request.position {
            case .first: .first
            case .olderThan(let cursor): .following(cursor)
            case .newerThan(let cursor): .preceding(cursor)
            case .last: .last
            }
        let (rows, hasNewer, hasOlder) = try pager.page(position, limit: request.limit)
        let items = rows.map { LocalStore.item(from: $0, table: table) }
        let keys: [Int64] = rows.map { $0[keyIndex] }
        let ids = items.compactMap { $0[SystemColumn.id]?.stringValue }
        var operations: [String: OperationSummary] = [:]
        for summary in try queue.summaries(db, table: table.name, itemIds: ids) {
            operations[summary.itemId] = summary
        }
        return ListPage(
            items: items, keys: keys, operations: operations, hasNewer: hasNewer, hasOlder: hasOlder,
            total: try total(db))
    }

    /// The number of matching rows from the store's counts; nil for a search.
    private func total(_ db: Database) throws -> Int? {
        guard request.search.isEmpty, let index = queue.store.listIndexes[table.name] else { return nil }
        guard let flag = request.flag else { return try index.count(db) }
        let set = try index.count(db, flag: flag.column)
        return flag.value ? set : try index.count(db) - set
    }
}
