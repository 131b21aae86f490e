import SyncClient

/// `/data`: the synced tables and the others the store holds, each with its counts.
struct DataTablesPage: Encodable, Sendable {
    /// One table's line.
    struct Table: Encodable, Sendable {
        var name: String
        var href: String
        var rows: Int
        var columns: Int
        var pending: Int
        var conflicts: Int
        var hasConflicts: Bool
        /// Whether Sync pulls it (it is in the Tables setting).
        var synced: Bool
    }

    var tables: [Table]
}

/// `/data/{table}`: one table's rows, newest first, with search, flag filters, pages and an Add form.
struct DataListPage: Encodable, Sendable {
    /// A column heading.
    struct Column: Encodable, Sendable {
        var name: String
        var type: String
    }

    /// One cell: the value as text, flagged when it is of another type than its column's.
    struct Cell: Encodable, Sendable {
        var text: String
        var mismatch: Bool
    }

    /// One row of the list.
    struct Row: Encodable, Sendable {
        var id: String
        var href: String
        var cells: [Cell]
        var badge: TodoRow.Badge?
    }

    /// The filter links of one boolean column.
    struct FlagFilter: Encodable, Sendable {
        var column: String
        var links: [TodoListPage.FilterLink]
    }

    var table: String
    var href: String
    var columns: [Column]
    var rows: [Row]
    var hasRows: Bool
    var search: String
    /// Whether the table has text columns to search.
    var searchable: Bool
    /// The boolean filter in effect, as hidden fields of the search form.
    var flagColumn: String?
    var flagValue: String?
    var flagFilters: [FlagFilter]
    var total: Int?
    var emptyMessage: String
    var pager: TodoListPage.Pager?
    /// The Add form's inputs: empty, or as typed when refused.
    var addFields: [RecordForm.Field]
    var addError: String?
}

/// `/data/{table}/{id}`: the editor of one row, one input per column by its type.
struct DataRecordPage: Encodable, Sendable {
    var table: String
    var tableHref: String
    var id: String
    /// The row's address: `/data/{table}/{id}`, both parts percent-encoded.
    var href: String
    var version: String?
    var updatedAt: String?
    var fields: [RecordForm.Field]
    var error: String?
    var operation: ItemPage.PendingChange?
    /// A row of `todoitem` also has the todo editor.
    var todoHref: String?
}

/// The confirmation page before deleting a row of any table.
struct DataDeletePage: Encodable, Sendable {
    var table: String
    var id: String
    var href: String
}
