import Foundation
import HTTPServer
import HTTPTypes
import SyncClient

/// `/doctor`: the protocol doctor in the dashboard. The form (prefilled with the dashboard's
/// remote) starts a run in the background and redirects to its page, which reloads itself while the
/// run lasts (a meta refresh: no JavaScript needed) and offers Cancel. Nothing local is written.
struct DoctorController: Sendable {
    let environment: DashboardEnvironment
    let runs: DoctorRuns

    func addRoutes(to router: inout Router) {
        router.get("/doctor") { request in
            form(
                request,
                DoctorFormPage(url: remote(), table: DashboardEnvironment.table, readOnly: false, runs: links()))
        }
        router.post("/doctor") { request in try start(request) }
        router.get("/doctor/runs/:number") { request in try show(request) }
        router.post("/doctor/runs/:number/cancel") { request in
            let number = try Self.number(request)
            runs.cancel(number)
            environment.sessions.flash(request, .success, "Doctor run \(number) cancelled.")
            return .redirect(to: "/doctor/runs/\(number)")
        }
    }

    /// The dashboard's remote, else its embedded service.
    private func remote() -> String {
        environment.settings.settings.remoteURL ?? environment.embeddedURL() ?? ""
    }

    private func links() -> [DoctorFormPage.RunLink] {
        runs.all.map { run in
            DoctorFormPage.RunLink(
                href: "/doctor/runs/\(run.number)",
                label: "Run \(run.number): \(run.options.url.absoluteString), table \(run.options.table) — "
                    + (run.report?.summary ?? "running"))
        }
    }

    private func form(_ request: Request, _ page: DoctorFormPage, status: HTTPResponse.Status = .ok) -> Response {
        var page = page
        page.hasRuns = !page.runs.isEmpty
        return environment.renderer.page("doctor", request, section: .settings, status: status, page)
    }

    private func start(_ request: Request) throws -> Response {
        let fields = try request.form()
        var page = DoctorFormPage(
            url: (fields["url"] ?? "").trimmingCharacters(in: .whitespaces),
            table: (fields["table"] ?? "").trimmingCharacters(in: .whitespaces), readOnly: fields["readOnly"] == "true",
            runs: [])
        var url: URL?
        do { url = try RemoteAddress(page.url).url } catch { page.urlError = error.description }
        if page.table.isEmpty || page.table.contains("/") {
            page.tableError = "Give a table name, such as todoitem."
        }
        guard let url, page.urlError == nil, page.tableError == nil else {
            return form(request, page, status: .unprocessableContent)
        }
        // The remote this dashboard syncs with is probed as its syncs reach it (key, token, CA file).
        var options = ProtocolDoctor.Options(url: url, table: page.table, readOnly: page.readOnly)
        if environment.settings.settings.remoteURL == page.url,
            var synced = environment.context.doctorOptions(table: page.table, readOnly: page.readOnly)
        {
            synced.url = url
            options = synced
        }
        let number = runs.start(options)
        return .redirect(to: "/doctor/runs/\(number)")
    }

    private func show(_ request: Request) throws -> Response {
        let number = try Self.number(request)
        guard let run = runs.run(number) else {
            throw HTTPError(
                .notFound, "There is no doctor run \(number) (only the newest \(DoctorRuns.kept) are kept).")
        }
        return environment.renderer.page("doctor/run", request, section: .settings, DoctorRunPage(run))
    }

    private static func number(_ request: Request) throws(HTTPError) -> Int {
        guard let number = request.parameters["number"].flatMap(Int.init) else {
            throw HTTPError(.notFound, "A doctor run is named by its number, such as /doctor/runs/1.")
        }
        return number
    }
}
