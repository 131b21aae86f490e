import HTTPServer

extension PageRenderer {
    /// The header's counts, on every page that follows the store.
    static let headerCounts = "partials/header-counts"

    /// A page's live fragments: the header's counts and `partials`, each rendered by the partial the
    /// page includes, from the same view as the page (token, header, navigation, content), so a
    /// fragment is what a reload would show there. The page's flash messages are left for it.
    func fragments<Content: Encodable & Sendable>(
        _ partials: [String], _ request: Request, section: Navigation.Section, _ content: Content
    ) -> [LiveFragment] {
        let view = PageView(
            csrf: csrfToken, header: header(), nav: Navigation(section), back: request.path, device: deviceName,
            flash: [], page: content)
        return ([Self.headerCounts] + partials).map { template in
            LiveFragment(template: template, html: templates.render(template, view))
        }
    }
}
