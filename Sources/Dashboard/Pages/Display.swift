import Foundation
import HTTPServer
import SyncClient
import SyncProtocol

/// Turns store values into what every page shows: dates, labels, cell texts and sync-state badges.
enum Display {
    /// The badge for a row's queued operation: kind, label and where it links.
    static func badge(_ operation: OperationSummary) -> SyncBadge {
        if operation.isHeld {
            return SyncBadge(
                kind: "held", label: "held \(operation.kind.rawValue)", href: "/operations#op-\(operation.id)")
        }
        return switch operation.state {
        case .conflict:
            SyncBadge(kind: "conflict", label: "conflict", href: "/conflicts/\(operation.id)")
        case .failed:
            SyncBadge(kind: "failed", label: "refused", href: "/operations")
        case .inFlight:
            SyncBadge(kind: "inflight", label: "sending", href: "/operations")
        case .pending, .attempted:
            SyncBadge(kind: operation.kind.rawValue, label: "pending \(operation.kind.rawValue)", href: "/operations")
        }
    }

    /// The badge class of an operation's state on the queue page.
    static func stateBadge(_ state: OperationState) -> String {
        switch state {
        case .conflict: "conflict"
        case .failed: "failed"
        case .inFlight: "inflight"
        case .pending, .attempted: "pending"
        }
    }

    /// Words for an operation state.
    static func stateLabel(_ state: OperationState) -> String {
        switch state {
        case .pending: "pending"
        case .inFlight: "sending"
        case .attempted: "retry pending"
        case .failed: "refused"
        case .conflict: "conflict"
        }
    }

    /// A value for a table cell: text as is, booleans as Yes/No, dates readable (the system times
    /// and a column of `type` date, as the lists show them), nothing as an em dash.
    static func display(_ value: JSONValue?, column: String = "", type: TableDescription.ColumnType? = nil) -> String {
        let isDate = type == .date || column == SystemColumn.updatedAt || column == SystemColumn.createdAt
        if isDate, value?.stringValue != nil {
            return date(value)
        }
        return switch value {
        case nil, .null?: "—"
        case .bool(let flag)?: flag ? "Yes" : "No"
        case .string(let text)?: text
        case let other?: other.description
        }
    }

    /// `2026-11-21T23:02:54.020Z` → `2026-11-21 23:02:54 UTC`; "" for anything else.
    static func date(_ value: JSONValue?) -> String {
        guard let text = value?.stringValue, text.count >= 19, text.dropFirst(10).first == "T" else { return "" }
        return text.prefix(10) + " " + text.dropFirst(11).prefix(8) + " UTC"
    }

    static func date(_ date: Date?) -> String {
        guard let date else { return "" }
        return Self.date(.string(date.formatted(.iso8601)))
    }

    /// An id as a list shows it: a UUID's first 8 digits and an ellipsis (the list puts the whole
    /// id in the element's title), any other id whole.
    static func shortId(_ id: String) -> String {
        id.utf8.count == 36 && UUID(uuidString: id) != nil ? String(id.prefix(8)) + "…" : id
    }

    /// How a page titles an item of `table`: its label (a todo's text), else its id as lists show it.
    static func title(_ item: Item?, table: String, id: String) -> String {
        TablePreset.of(table).label(item) ?? shortId(id)
    }

    /// A copy of an item of `table` in words, for a list's cell: its label (a todo's text), else its
    /// user columns whose values differ from `other` (what the side changed from the base: `paid: Yes,
    /// total: 12`), at most 80 characters.
    static func words(_ item: Item, differingFrom other: Item?, table: TableDescription) -> String {
        if let label = TablePreset.of(table.name).label(item) { return label }
        let types = Dictionary(table.columns.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        let names = item.keys.filter { name in
            !SystemColumn.all.contains(name) && item[name] ?? .null != other?[name] ?? .null
        }.sorted()
        let words = names.map { "\($0): \(display(item[$0], column: $0, type: types[$0]))" }
        return String(words.joined(separator: ", ").prefix(80))
    }
}

/// A row's queued operation as a badge: its CSS kind, its words and where it links.
struct SyncBadge: Hashable, Sendable, Encodable {
    var kind: String
    var label: String
    var href: String
}
