import Foundation
import HTTPServer

/// `POST /sync`, `/push`, `/pull`, `/verify`: start the work in the background and return at once;
/// `POST /cancel` stops it.
struct SyncController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        for kind in [BackgroundSync.Kind.sync, .push, .pull, .verify] {
            router.post("/\(kind.rawValue)") { request in try start(kind, request) }
        }
        router.post("/cancel") { request async throws in try await cancel(request) }
    }

    /// `POST /cancel`: stops the running sync; its result ("Cancelled") shows as a message.
    private func cancel(_ request: Request) async throws -> Response {
        if !(await environment.sync.cancel()) {
            environment.sessions.flash(request, .info, "No sync is running.")
        }
        return .redirect(to: DashboardEnvironment.safeBack(try? request.form()["back"]))
    }

    private func start(_ kind: BackgroundSync.Kind, _ request: Request) throws -> Response {
        let started = environment.sync.start(kind, session: request.attributes[Sessions.attribute])
        if !started {
            environment.sessions.flash(request, .info, "A sync is already running; its result will show here.")
        }
        let back = DashboardEnvironment.safeBack(try? request.form()["back"])
        return .redirect(to: back)
    }
}
