import HTTPServer

// The pages that follow the store, and the partials of each that do (besides the header's counts).
// Each controller's route uses ``Router/getLive(_:updates:page:fragments:)`` with these.

extension DataController {
    /// A table's list (and the todo list): its rows, or why there are none, and its pager.
    func listFragments(_ request: Request, _ preset: TablePreset) throws -> [LiveFragment] {
        environment.renderer.fragments(
            ["data/list-body"], request, section: preset.section, try listContent(request, preset))
    }

    /// A row's page: its inputs (kept while someone types in them) and its sync details.
    func recordFragments(_ request: Request, _ preset: TablePreset) throws -> [LiveFragment] {
        environment.renderer.fragments(
            ["data/record-form", "data/record-details"], request, section: preset.section,
            try recordContent(request, preset))
    }

    /// `/data`: each table with its counts.
    func tablesFragments(_ request: Request) throws -> [LiveFragment] {
        environment.renderer.fragments(["data/tables-list"], request, section: .data, try tablesContent())
    }
}

extension OperationsController {
    /// The queue: its counts, bulk actions, changes and pager.
    func listFragments(_ request: Request) throws -> [LiveFragment] {
        environment.renderer.fragments(["operations/queue"], request, section: .operations, try listContent(request))
    }
}

extension ConflictsController {
    /// Every conflict matching the page's filter.
    func listFragments(_ request: Request) throws -> [LiveFragment] {
        environment.renderer.fragments(["conflicts/list"], request, section: .conflicts, try listContent(request))
    }
}

extension JournalController {
    /// The journal's entries for the page's filters and cursor.
    func listFragments(_ request: Request) throws -> [LiveFragment] {
        environment.renderer.fragments(["journal/list"], request, section: .journal, try listContent(request))
    }
}
