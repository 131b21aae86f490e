import HTTPServer
import SyncClient

/// The one parser of a list's query string, for every table's list and its API: `q` (search of the
/// text columns), a true/false column's filter (`flag=COLUMN&is=true|false`, or a preset's tab such as
/// `show=active`), and the page (`older`, `newer`, `at=last`).
///
/// Pages are cut by the key of a row they border, so every page costs the same at 1,000 rows as at
/// 1,000,000, and a row never shows twice while others come and go.
struct DataListQuery {
    let preset: TablePreset
    var search = ""
    var flag: ListRequest.Flag?
    var position = ListPosition.first

    /// Rows per page.
    static let pageSize = 50

    init(_ request: Request, table: TableDescription, preset: TablePreset) throws(HTTPError) {
        self.preset = preset
        search = String((request.query("q") ?? "").trimmingCharacters(in: .whitespaces).prefix(200))
        if let tabs = preset.tabs, let name = request.query("show"), !name.isEmpty {
            guard let value = tabs.value(named: name) else {
                let names = tabs.named.map(\.name)
                throw HTTPError(
                    .badRequest,
                    "Unknown filter '\(name)': use \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "").")
            }
            flag = value.map { ListRequest.Flag(tabs.column, $0) }
        } else if let column = request.query("flag"), !column.isEmpty {
            guard table.columnType(column) == .boolean else {
                throw HTTPError(.badRequest, "“\(column)” is not a true/false column of \(table.name).")
            }
            guard let value = ["true": true, "false": false][request.query("is") ?? ""] else {
                throw HTTPError(.badRequest, "Filter with is=true or is=false.")
            }
            flag = ListRequest.Flag(column, value)
        }
        let mistake = "A page position is a whole number, as in the Next and Previous links."
        if let key = try request.key("older", mistake: mistake) {
            position = .olderThan(key)
        } else if let key = try request.key("newer", mistake: mistake) {
            position = .newerThan(key)
        } else if try request.atLast() {
            position = .last
        }
    }

    var request: ListRequest {
        ListRequest(flag: flag, search: search, position: position, limit: Self.pageSize)
    }

    /// The query's fields other than the page, as the search form's hidden inputs carry them.
    var filterFields: [(name: String, value: String)] {
        guard let flag else { return [] }
        if let tabs = preset.tabs, tabs.column == flag.column,
            let tab = tabs.named.first(where: { $0.value == flag.value })
        {
            return [("show", tab.name)]
        }
        return [("flag", flag.column), ("is", String(flag.value))]
    }

    /// The list's address with this query, another flag filter (`.some(nil)`: none) or another page.
    func href(_ position: ListPosition = .first, flag: ListRequest.Flag?? = nil) -> String {
        var query = self
        if let flag { query.flag = flag }
        var items = query.filterFields.map { "\($0.name)=\(PercentDecoding.encode($0.value))" }
        if !search.isEmpty { items.append("q=\(PercentDecoding.encode(search))") }
        switch position {
        case .first: break
        case .olderThan(let key): items.append("older=\(key)")
        case .newerThan(let key): items.append("newer=\(key)")
        case .last: items.append("at=last")
        }
        return preset.listPath + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
    }
}
