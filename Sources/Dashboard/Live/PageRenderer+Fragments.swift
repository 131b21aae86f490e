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
            flash: [], signedIn: request.accessRole?.rawValue, page: content)
        return ([Self.headerCounts] + partials).map { template in
            LiveFragment(template: template, html: templates.render(template, view))
        }
    }

    /// The header's counts alone, for what changes outside the store (auto-sync's state, offline
    /// mode, the remote's change channel). The partial reads only `header`, so this is the HTML the
    /// page's own fragments have for the same state.
    func headerCounts() -> LiveFragment {
        struct HeaderOnly { let header: HeaderView }
        return LiveFragment(
            template: Self.headerCounts, html: templates.render(Self.headerCounts, HeaderOnly(header: header())))
    }
}
