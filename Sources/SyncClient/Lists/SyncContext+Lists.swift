import GRDB
import SyncProtocol

/// Where a page of a list starts: lists run from the newest stored row to the oldest, and a page
/// is cut by the key of a row it borders, so it stays put while rows come and go elsewhere.
public enum ListPosition: Sendable, Hashable {
    /// The newest rows.
    case first
    /// The rows stored before the row with this key (the next page).
    case olderThan(Int64)
    /// The rows stored after the row with this key (the previous page).
    case newerThan(Int64)
    /// The oldest rows.
    case last
}

/// Which rows of a table a list shows, and which page of them.
public struct ListRequest: Sendable, Hashable {
    /// Only rows whose boolean `column` is `value` (a missing value counts as false).
    public struct Flag: Sendable, Hashable {
        public var column: String
        public var value: Bool

        public init(_ column: String, _ value: Bool) {
            self.column = column
            self.value = value
        }
    }

    public var flag: Flag?
    /// Only rows whose text columns contain this, ignoring case; empty for all.
    public var search: String
    public var position: ListPosition
    /// Rows per page.
    public var limit: Int

    public init(flag: Flag? = nil, search: String = "", position: ListPosition = .first, limit: Int = 50) {
        self.flag = flag
        self.search = search
        self.position = position
        self.limit = max(1, limit)
    }
}

/// One page of a list, read in one read transaction with the latest queued change of each row.
public struct ListPage: Sendable {
    /// The rows, newest first.
    public var items: [Item]
    /// Each row's key, for the cursors of the neighbouring pages.
    public var keys: [Int64]
    /// The latest queued change of the rows that have one, by id.
    public var operations: [String: OperationSummary]
    /// Whether newer rows exist before this page, and older ones after it.
    public var hasNewer: Bool
    public var hasOlder: Bool
    /// How many rows match in all; kept up to date by the store, so known without counting,
    /// except for a search (nil).
    public var total: Int?
}

extension SyncContext {
    /// One page of `table`'s rows, newest first. The cost does not grow with the table: pages
    /// are cut by key (no OFFSET), a search goes through the trigram index, a flag through its
    /// index, and totals come from counts the store keeps.
    public nonisolated func listPage(_ table: String, _ request: ListRequest) throws(SyncError) -> ListPage {
        let description = try store.description(of: table)
        if let flag = request.flag, description.type(of: flag.column) != .boolean {
            throw .invalidItem("'\(flag.column)' is not a true/false column of \(table)")
        }
        return try read { [queue] db in try ListReader(queue: queue, table: description, request: request).read(db) }
    }

    /// Returns once the counts and search indexes hold every row pulled so far. Lists are exact
    /// before that too: rows they do not hold yet are counted and searched one by one.
    public nonisolated func listIndexesCaughtUp() async {
        await store.listIndexer.idle()
    }
}

/// Builds and runs the SQL of one ``ListPage``.
struct ListReader {
    let queue: SyncOperationQueue
    let table: TableDescription
    let request: ListRequest

    private var name: String { table.name.quotedSQLName }

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
