import HTTPServer
import Views

/// The dashboard's pages and assets, wired into a router.
public struct DashboardSite: Sendable {
    /// Templates every dashboard page needs; start-up fails if one is missing.
    public static let requiredTemplates = ["layout", "partials/header", "partials/flash", "todos"]

    private let templates: TemplateLibrary
    private let files: StaticFiles
    private let csrf: CSRFProtection
    private let host: String
    private let port: Int

    /// Loads the templates (failing with the name of any broken one) and prepares the assets.
    public init(resources: ResourceFolders, host: String, port: Int) throws(TemplateError) {
        templates = try TemplateLibrary(folder: resources.templatesFolder, required: Self.requiredTemplates)
        files = StaticFiles(folder: resources.publicFolder)
        csrf = CSRFProtection()
        self.host = host
        self.port = port
    }

    /// The router: security middleware first, then assets and pages.
    public func router() -> Router {
        var router = Router()
        router.use(HostAllowList(boundTo: host, port: port))
        router.use(SecurityHeaders())
        router.use(csrf)
        let files = self.files
        router.get("/public/*") { request in try files.respond(request) }
        let templates = self.templates
        let token = csrf.token
        router.get("/") { _ in
            templates.page("todos", ["csrf": token, "items": [[String: Any]]()])
        }
        return router
    }
}
