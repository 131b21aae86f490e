import Foundation
import HTTPServer
import SyncClient

/// `/verify` and `GET /api/verify`: what the last verify found (every synced table compared with
/// the service, row by row), with Verify now and, while it runs, its progress and Cancel. The
/// verify itself runs in the background like a sync (`POST /verify`, `POST /api/verify`).
struct VerifyController: Sendable {
    let environment: DashboardEnvironment
    /// Rows listed per table on the page (the JSON has them all).
    static let shownPerTable = 500

    func addRoutes(to router: inout Router) {
        router.get("/verify") { request in page(request) }
    }

    /// Adds its JSON route to the dashboard's `/api` group.
    func addAPIRoutes(to api: inout Router) {
        api.get("/verify") { _ in self.api() }
    }

    private func page(_ request: Request) -> Response {
        let sync = environment.sync
        let view = VerifyView(
            outcome: sync.lastVerifyOutcome, running: sync.runningKind == .verify, busy: sync.isRunning,
            shownPerTable: Self.shownPerTable)
        return environment.renderer.page("verify", request, section: .data, view)
    }

    /// `{"running": false, "reports": [...], "stopped": null}`: the last verify's reports.
    private func api() -> Response {
        struct Answer: Encodable {
            var running: Bool
            var reports: [VerifyReport]
            var stopped: String?
        }
        let sync = environment.sync
        let outcome = sync.lastVerifyOutcome
        return JSONAnswer.response(
            Answer(running: sync.runningKind == .verify, reports: outcome?.reports ?? [], stopped: outcome?.stopped))
    }
}
