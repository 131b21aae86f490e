import HTTPServer

// The Data pages that follow the store, and the partials of each that do (besides the header's
// counts). A page of one template and content uses
// ``Router/getLive(_:_:template:partials:section:content:)`` instead; these take the preset as well.

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
}
