import SyncClient
import Views

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

/// A table's list (`/data/{table}`, and the todo list at `/`): rows newest first, with search,
/// filters, pages and Add.
struct DataListPage: Encodable, Sendable {
    /// A column heading.
    struct Column: Encodable, Sendable {
        var heading: String
        /// The store's type, shown beside the name (not with a preset's own headings).
        var type: String?
        var isNumber: Bool
        /// What the service's schema did to the column ("renamed from text", "added by the
        /// service", "retired by the service"), nil when nothing.
        var serviceChange: String? = nil
    }

    /// The filter links of one true/false column.
    struct FlagFilter: Encodable, Sendable {
        var column: String
        var links: [FilterLink]
    }

    /// A hidden field of the search form (the filter in effect).
    struct Hidden: Encodable, Sendable {
        var name: String
        var value: String
    }

    /// The one-line Add of a preset with a label column.
    struct QuickAdd: Encodable, Sendable {
        var inputName: String
        var value: String
        var error: String?
    }

    var title: String
    var table: String
    var noun: String
    var href: String
    /// Where Add posts.
    var addAction: String
    var tabs: [FilterLink]
    var hasTabs: Bool
    var flagFilters: [FlagFilter]
    var searchable: Bool
    var search: String
    var hidden: [Hidden]
    /// Rows are headed by their id (no label column).
    var showsId: Bool
    var columns: [Column]
    /// The page's rows, rendered once each through the row cache.
    var rows: RenderedFragments<ListRow>
    var hasRows: Bool
    var total: Int?
    var emptyMessage: String
    var pager: Pager?
    var quickAdd: QuickAdd?
    /// The full Add form's inputs (without a one-line Add): empty, or as typed when refused.
    var addFields: [RecordForm.Field]
    /// The Add form's inputs for a column the table has no field for (not on a preset's quick Add).
    var newColumn: RecordForm.NewColumn?
    var addError: String?
}

/// One row of a list, as `data/row` shows it; it is also the key of its rendered HTML in the
/// list's ``Views/FragmentCache``.
struct ListRow: Hashable, Sendable, Encodable {
    var id: String
    /// The id as the list shows it (see ``Display/shortId(_:)``).
    var shownId: String
    var href: String
    /// The row's element id (`row-…`), where a form sent from it returns.
    var anchor: String
    var showsId: Bool
    /// Struck through: a todo that is complete.
    var done: Bool
    var cells: [Cell]
    var badge: SyncBadge?
    var updatedAt: String?
    /// The token of the row's checkbox forms (the same for every row).
    var csrf: String

    /// One cell: the value by its column's type.
    struct Cell: Hashable, Sendable, Encodable {
        var text: String
        /// Right-aligned.
        var isNumber = false
        /// Kept on one line.
        var isDate = false
        /// The row's label: a link to its page.
        var isLink = false
        /// A true/false value: a checkbox that sets it.
        var toggle: Toggle?
        /// Of another type than its column's: kept exactly, flagged.
        var mismatch = false
    }

    /// A true/false cell's checkbox: a form that sets the column to `next`.
    struct Toggle: Hashable, Sendable, Encodable {
        var column: String
        var checked: Bool
        var next: String
        /// Its accessible name ("Done: buy milk").
        var label: String
        /// Ticking it strikes the row through (a todo's Done).
        var marksDone: Bool
    }
}

/// A row's page (`/data/{table}/{id}`, `/items/{id}`): one input per column by its type.
struct DataRecordPage: Encodable, Sendable {
    var heading: String
    var title: String
    var table: String
    var noun: String
    /// The row's label in quotes, or its id.
    var name: String
    var listHref: String
    var id: String
    var href: String
    var version: String?
    var updatedAt: String?
    var fields: [RecordForm.Field]
    /// The inputs for a column the table has no field for (not on a preset's page).
    var newColumn: RecordForm.NewColumn?
    var error: String?
    var operation: PendingChange?
}

/// The confirmation page before deleting a row of any table.
struct DataDeletePage: Encodable, Sendable {
    var table: String
    var noun: String
    var name: String
    var href: String
}
