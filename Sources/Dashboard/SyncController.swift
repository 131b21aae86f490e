import Foundation
import HTTPServer

/// `POST /sync`, `/push`, `/pull`: start the work in the background and return at once.
struct SyncController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        for kind in [BackgroundSync.Kind.sync, .push, .pull] {
            router.post("/\(kind.rawValue)") { request in try start(kind, request) }
        }
    }

    private func start(_ kind: BackgroundSync.Kind, _ request: Request) throws -> Response {
        let started = environment.sync.start(kind, session: request.attributes[Sessions.attribute])
        if request.headers["X-Requested-With"] == "fetch" {
            return try .json(["started": started, "running": true], status: 202)
        }
        if !started {
            environment.sessions.flash(request, .info, "A sync is already running; its result will show here.")
        }
        let back = DashboardEnvironment.safeBack(try? request.form()["back"])
        return .redirect(to: back)
    }
}
