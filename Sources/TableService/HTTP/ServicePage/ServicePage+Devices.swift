import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol

/// The fleet's pages (`/service/devices`, `/service/devices/{id}`) and its admin API
/// (`/service/api/...`, JSON; see `docs/fleet.md`), behind the same access as the other pages.
extension ServicePage {
    func addDeviceRoutes(to router: inout Router) {
        router.get(base + "/devices") { request in
            if request.headers[.accept]?.contains("text/event-stream") == true { return await self.follow(request) }
            return await self.guarded(request) { try await self.devicesPage(request) }
        }
        router.get(base + "/devices/:id") { request in
            await self.guarded(request) { try await self.devicePage(request) }
        }
        router.post(base + "/devices/:id/bundle-request") { request in
            await self.guarded(request, form: true) {
                let id = try Self.deviceID(request)
                guard await self.fleet.requestBundle(id) else {
                    throw HTTPError(.notFound, "No device \(id) has been seen.")
                }
                return .redirect(to: "\(self.base)/devices/\(NextPageLink.encode(id))")
            }
        }
        router.get(base + "/devices/:id/bundle") { request in
            await self.guarded(request) { try await self.bundleDownload(request) }
        }
        router.get(base + "/live.js") { _ in self.liveScript() }
        addAPIRoutes(to: &router)
        addRevocationRoutes(to: &router)
    }

    // MARK: Pages

    private func filter(_ request: Request) throws(HTTPError) -> ServiceDevicesPage.Filter {
        var filter = ServiceDevicesPage.Filter()
        if let state = request.query("state"), !state.isEmpty {
            guard let known = DeviceState(rawValue: state) else {
                throw HTTPError(
                    .badRequest,
                    "'\(state)' is not a state: use \(DeviceState.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            filter.state = known
        }
        if let table = request.query("table"), !table.isEmpty { filter.table = table }
        filter.byLag = request.query("sort") == "lag"
        if let page = request.query("page") {
            guard let number = Int(page), number >= 1, number <= 1_000_000 else {
                throw HTTPError(.badRequest, "The page must be a whole number from 1; '\(page)' is not.")
            }
            filter.page = number
        }
        return filter
    }

    private func devicesPage(_ request: Request) async throws -> Response {
        let content = ServiceDevicesPage(
            await fleet.snapshot(), filter: try filter(request), base: base, now: fleet.clock())
        return page("service/devices", title: "Devices", content)
    }

    private func devicePage(_ request: Request) async throws -> Response {
        let id = try Self.deviceID(request)
        let now = fleet.clock()
        guard let device = await fleet.assessment(id: id, now: now) else {
            throw HTTPError(.notFound, "No device \(id) has been seen.")
        }
        var content = ServiceDevicePage(
            Fleet.report(device, now: now), lag: device.record.lag, base: base, now: now)
        content.noteRevocation(
            fleet.revocations.refusal(user: device.record.user, device: id), lastContact: device.record.lastContact,
            receipts: try await fleet.escrow.receipts(device: id), escrowHref: base + "/escrow")
        return page("service/device", title: "Device \(id)", content)
    }

    private func bundleDownload(_ request: Request) async throws -> Response {
        let id = try Self.deviceID(request)
        guard let bundle = await fleet.bundle(id) else {
            throw HTTPError(.notFound, "Device \(id) has sent no support bundle.")
        }
        var response = Response(status: .ok, body: bundle.zip)
        response.headers[.contentType] = "application/zip"
        response.headers[.contentDisposition] = "attachment; filename=\"todosync-bundle-\(id).zip\""
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The devices page's list, followed live: its fragment rendered every second and sent when it
    /// changed (the page's script, the dashboard's `live.js`, puts it in place).
    private func follow(_ request: Request) async -> Response {
        guard access.verdict(request, signedIn: signedIn(request)) == .allowed,
            let filter = try? filter(request)
        else {
            return .jsonError("Sign in to follow the devices.", status: .unauthorized)
        }
        return .eventStream { stream in
            var last = ""
            var revision: UInt64 = 0
            while true {
                let content = ServiceDevicesPage(
                    await self.fleet.snapshot(), filter: filter, base: self.base, now: self.fleet.clock())
                let html = self.templates.render(
                    "service/devices-body",
                    ServicePageView(
                        base: self.base, csrf: self.csrfToken, title: "", flash: nil, page: content))
                if html != last {
                    last = html
                    revision += 1
                    let data = JSONValue.object([
                        "revision": .number(Double(revision)), "fragments": .array([.string(html)]),
                    ])
                    if !stream.send(ServerSentEvent(id: String(revision), event: "fragments", data: data.jsonText)) {
                        return
                    }
                }
                let closed = await withTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        await stream.closed()
                        return true
                    }
                    group.addTask {
                        try? await Task.sleep(for: .seconds(1))
                        return false
                    }
                    let first = await group.next() ?? true
                    group.cancelAll()
                    return first
                }
                if closed { return }
            }
        }
    }

    /// The dashboard's `Public/js/live.js`, beside the templates, for the devices page.
    private func liveScript() -> Response {
        guard let file = publicFolder?.appendingPathComponent("js/live.js"), let script = try? Data(contentsOf: file)
        else { return Response(status: .notFound) }
        var response = Response(status: .ok, body: script)
        response.headers[.contentType] = "text/javascript; charset=utf-8"
        return response
    }

    // MARK: API

    private func addAPIRoutes(to router: inout Router) {
        router.get(base + "/api/devices") { request in
            await self.api(request) {
                let now = self.fleet.clock()
                let selected = ServiceDevicesPage.select(
                    await self.fleet.assessments(now: now), try self.filter(request))
                let reports = selected.map { Fleet.report($0, now: now) }
                var counts = Dictionary(uniqueKeysWithValues: DeviceState.allCases.map { ($0.rawValue, 0) })
                for report in reports { counts[report.state.rawValue, default: 0] += 1 }
                return try Self.json(DevicesAnswer(devices: reports, counts: counts))
            }
        }
        router.get(base + "/api/devices/:id") { request in
            await self.api(request) {
                let id = try Self.deviceID(request)
                guard let report = await self.fleet.report(id: id) else {
                    throw HTTPError(.notFound, "No device \(id) has been seen.")
                }
                return try Self.json(report)
            }
        }
        router.post(base + "/api/devices/:id/bundle-request") { request in
            await self.api(request) {
                let id = try Self.deviceID(request)
                guard await self.fleet.requestBundle(id) else {
                    throw HTTPError(.notFound, "No device \(id) has been seen.")
                }
                var response = Response.json(data: Data(#"{"requested":true}"#.utf8))
                response.status = .accepted
                return response
            }
        }
        router.get(base + "/api/devices/:id/bundle") { request in
            await self.api(request) { try await self.bundleDownload(request) }
        }
        router.get(base + "/api/alerts") { request in
            await self.api(request) { try Self.json(AlertsAnswer(alerts: await self.alerts.recent())) }
        }
    }

    private struct DevicesAnswer: Encodable {
        var devices: [DeviceReport]
        var counts: [String: Int]
    }

    private struct AlertsAnswer: Encodable {
        var alerts: [FleetAlerts.Alert]
    }

    /// Runs an API request after the access check; every error is JSON with a message.
    func api(_ request: Request, _ body: () async throws -> Response) async -> Response {
        var response: Response
        // A page of another site could make a browser POST here with the session cookie or from
        // loopback (a simple request needs no preflight): a write must come from no page or ours.
        if request.method != .get, let origin = request.headers[.origin],
            !CORSPolicy(allowedOrigins: []).allows(origin, on: request)
        {
            response = .jsonError("A page of \(origin) may not change the service's devices.", status: .forbidden)
            response.headers[.cacheControl] = "no-store"
            return response
        }
        switch access.verdict(request, signedIn: signedIn(request)) {
        case .allowed:
            do {
                response = try await body()
            } catch let error as any HTTPResponseError {
                logIfUnexplained(error, request)
                response = .jsonError(error.message, status: error.status)
            } catch {
                logger.error("service API \(request.method) \(request.path) failed: \(error)")
                response = .jsonError("The answer could not be made. Please try again.", status: .internalServerError)
            }
        case .signInNeeded:
            response = .jsonError("Send the admin key as Authorization: Bearer KEY.", status: .unauthorized)
            response.headers[.wwwAuthenticate] = "Bearer"
        case .refused(let message):
            response = .jsonError(message, status: .forbidden)
        }
        response.headers[.cacheControl] = "no-store"
        return response
    }

    static func json(_ value: some Encodable) throws -> Response {
        .json(data: try JSONEncoder.todosync().encode(value))
    }

    static func deviceID(_ request: Request) throws(HTTPError) -> String {
        do {
            return try DeviceIdentity.checkedID(request.parameters["id"] ?? "")
        } catch {
            throw HTTPError(.badRequest, error.message)
        }
    }
}
