import Clocks
import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import TableService

/// The fleet over real HTTP: simulated devices pull and push, the admin API and pages answer what
/// the service learned (see `docs/fleet.md`). The service's clock and its timers are the test's: a
/// stall, a fleet pass and an alert's retry are a matter of the clock moved, not of seconds waited.
@Suite("Fleet")
struct FleetTests {
    static let adminKey = "fleet-admin-key-0123456789"
    static let admin: HTTPFields = [.authorization: "Bearer \(adminKey)"]
    static let start: Int64 = 1_800_000_000_000

    static func device(_ id: String) -> HTTPFields {
        [ProtocolHeader.apiVersion: "2.0.0", ProtocolHeader.installationID: id]
    }

    /// An incremental pull's address from `after` (milliseconds), as official clients ask.
    static func pull(after: Int64) -> String {
        let time = ProtocolDate.format(milliseconds: after)
        return
            "/tables/todoitem?$filter=(updatedAt%20gt%20datetimeoffset%27\(time)%27)&$orderby=updatedAt&__includeDeleted=true"
    }

    static func withFleet(
        _ backend: Backend = .sqlite, sharing: TestServer? = nil, webhook: URL? = nil,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        try await withTestServer(
            backend, sharing: sharing, tables: ["todoitem"], controlledClock: true, controlledTimers: true, page: true,
            configure: {
                $0.adminKey = adminKey
                $0.fleetThresholds = FleetThresholds(
                    behindAfterSeconds: 60, stalledAfterSeconds: 120, offlineAfterSeconds: 86_400)
                $0.alertWebhook = webhook
                $0.alertPause = { _ in .milliseconds(10) }
            }
        ) { server in
            server.clock.now = start
            try await body(server)
        }
    }

    static func insert(_ server: TestServer, _ id: String, by device: String = "writer") async throws {
        let reply = try await server.send(
            .post, "/tables/todoitem", json: ["id": id, "text": id], headers: Self.device(device))
        #expect(reply.status == 201)
    }

    static func devices(_ server: TestServer, _ query: String = "") async throws -> [[String: Any]] {
        let reply = try await server.send(.get, "/service/api/devices" + query, headers: admin)
        #expect(reply.status == 200, "\(reply.text)")
        return reply.object?["devices"] as? [[String: Any]] ?? []
    }

    static func state(_ server: TestServer, _ id: String) async throws -> String? {
        try await devices(server).first { $0["id"] as? String == id }?["state"] as? String
    }

    @Test(
        "A device that keeps pulling from a frozen position while the head moves is stalled; one that advances stays healthy",
        arguments: Backend.all)
    func aFrozenDeviceIsStalledAndAnAdvancingOneIsNot(_ backend: Backend) async throws {
        try await Self.withFleet(backend) { server in
            var advancing: Int64 = 0
            for step in 0..<6 {
                try await Self.insert(server, "row-\(step)")
                // The frozen device asks from the start again and again; the other from its last row.
                #expect(try await server.send(.get, Self.pull(after: 0), headers: Self.device("frozen")).status == 200)
                let page = try await server.send(.get, Self.pull(after: advancing), headers: Self.device("advancing"))
                if let last = page.array?.last?["updatedAt"] as? String, let stamp = ProtocolDate.parse(last) {
                    advancing = stamp
                }
                server.clock.now! += 30_000
            }
            #expect(try await Self.state(server, "frozen") == "stalled")
            #expect(try await Self.state(server, "advancing") == "healthy")
            #expect(try await Self.state(server, "writer") == "healthy")
            let stalled = try await Self.devices(server, "?state=stalled")
            #expect(stalled.map { $0["id"] as? String } == ["frozen"])
            let table = (stalled.first?["tables"] as? [[String: Any]])?.first
            #expect(table?["lagRows"] as? Int == 6)
            #expect(table?["position"] as? String == "1970-01-01T00:00:00.000Z")
            // Its page says what is wrong and what an admin can do.
            let page = try await server.send(.get, "/service/devices/frozen", headers: Self.admin)
            #expect(page.status == 200 && page.text.contains("not applying what it"), "\(page.text)")
            #expect(page.text.contains("lag-chart") && page.text.contains("Ask the device for its support bundle"))
        }
    }

    @Test("A device that asks with an inclusive bound (ge) from its last row is at the head, not stalled")
    func anInclusiveBoundAtTheHeadIsHealthy() async throws {
        try await Self.withFleet { server in
            try await Self.insert(server, "only")
            let page = try await server.send(.get, Self.pull(after: 0), headers: Self.device("phone"))
            let last = try #require(page.array?.last?["updatedAt"] as? String)
            for _ in 0..<6 {
                let again = try await server.send(
                    .get,
                    "/tables/todoitem?$filter=(updatedAt%20ge%20datetimeoffset%27\(last)%27)&__includeDeleted=true",
                    headers: Self.device("phone"))
                #expect(again.array?.count == 1)
                server.clock.now! += 30_000
            }
            let all = try await Self.devices(server)
            #expect(try await Self.state(server, "phone") == "healthy", "\(all)")
        }
    }

    @Test("A malformed device id or a nonsense client state is a 400, and nothing is noted")
    func badDeviceHeadersAreRefused() async throws {
        try await Self.withFleet { server in
            for id in ["has space", String(repeating: "a", count: 129), "semi;colon", "ü"] {
                let reply = try await server.send(.get, "/tables/todoitem", headers: Self.device(id))
                #expect(reply.status == 400, "\(id)")
            }
            var nonsense = Self.device("phone")
            nonsense[ProtocolHeader.clientState] = "queue=-3, oldest=NaN"
            #expect(try await server.send(.get, "/tables/todoitem", headers: nonsense).status == 400)
            #expect(try await Self.devices(server).isEmpty)
            var honest = Self.device("phone")
            honest[ProtocolHeader.clientState] = "queue=3, oldest=120, conflicts=1"
            #expect(try await server.send(.get, "/tables/todoitem", headers: honest).status == 200)
            let reported = try await Self.devices(server).first?["reported"] as? [String: Any]
            #expect(reported?["queue"] as? Int == 3 && reported?["conflicts"] as? Int == 1)
        }
    }

    @Test("The admin API and pages refuse no key, the application key and a wrong key; they take the admin key")
    func theAdminSurfacesNeedTheAdminKey() async throws {
        try await withTestServer(
            tables: ["todoitem"], page: true,
            configure: {
                $0.adminKey = Self.adminKey
                $0.applicationKey = "app-key"
            }
        ) { server in
            #expect(try await server.send(.get, "/service/api/devices", headers: [:]).status == 401)
            #expect(
                try await server.send(.get, "/service/api/devices", headers: [ProtocolHeader.applicationKey: "app-key"])
                    .status == 403)
            #expect(
                try await server.send(.get, "/service/api/devices", headers: [.authorization: "Bearer app-key"]).status
                    == 403)
            #expect(try await server.send(.get, "/service/api/devices", headers: Self.admin).status == 200)
            #expect(
                try await server.send(.get, "/service/devices", headers: [ProtocolHeader.applicationKey: "app-key"])
                    .status == 403)
            let form = try await server.send(.get, "/service/devices", headers: [:])
            #expect(form.status == 401 && form.text.contains("admin key"))
        }
    }

    @Test("/metrics counts the devices per state and names none of them")
    func metricsCarryNoIDs() async throws {
        try await Self.withFleet { server in
            try await Self.insert(server, "a", by: "phone-secret-id-1")
            _ = try await server.send(.get, Self.pull(after: 0), headers: Self.device("tablet-secret-id-2"))
            let metrics = try await server.send(.get, "/metrics", headers: [:]).text
            #expect(metrics.contains("todosync_devices{state=\"healthy\"} 2"), "\(metrics)")
            #expect(!metrics.contains("secret-id"))
        }
    }

    @Test("A stall sends exactly one webhook, and its recovery one more, to a real receiver", arguments: Backend.all)
    func oneWebhookPerEpisode(_ backend: Backend) async throws {
        let receiver = try WebhookReceiver(failFirst: true)
        defer { Task { await receiver.stop() } }
        try await Self.withFleet(backend, webhook: URL(string: receiver.url + "/hook")) { server in
            try await Self.insert(server, "a")
            for _ in 0..<6 {
                _ = try await server.send(.get, Self.pull(after: 0), headers: Self.device("frozen"))
                server.clock.now! += 30_000
            }
            // The receiver answers 500 the first time: the same alert comes again.
            try await whileTimersMove(server, until: "2 webhook calls received") { receiver.events.count >= 2 }
            // Two passes more (an alert they raised would be on its way by the second): no new alert.
            let passes = server.running.service.fleetPasses
            try await whileTimersMove(server, until: "two fleet passes more") {
                server.running.service.fleetPasses >= passes + 2
            }
            #expect(receiver.events.map(\.event) == ["stalled", "stalled"])
            #expect(receiver.events.first?.id == "frozen")
            // It advances: one recovery.
            _ = try await server.send(.get, Self.pull(after: Self.start + 1_000_000), headers: Self.device("frozen"))
            try await whileTimersMove(server, until: "3 webhook calls received") { receiver.events.count >= 3 }
            #expect(receiver.events.last?.event == "recovered")
            let alerts = try await server.send(.get, "/service/api/alerts", headers: Self.admin).object?["alerts"]
            #expect((alerts as? [[String: Any]])?.map { $0["event"] as? String } == ["recovered", "stalled"])
        }
    }

    @Test(
        "A bundle asked for reaches the device in a header, is taken once as a zip from that device only, and is served to the admin"
    )
    func aRequestedBundleArrives() async throws {
        try await Self.withFleet { server in
            _ = try await server.send(.get, "/tables/todoitem", headers: Self.device("phone"))
            let zip = Data([0x50, 0x4B, 0x03, 0x04]) + Data("a bundle".utf8)
            var upload = Self.device("phone")
            upload[.contentType] = "application/zip"
            #expect(try await server.send(.post, "/devices/phone/bundle", headers: upload, body: zip).status == 409)
            #expect(
                try await server.send(.post, "/service/api/devices/nobody/bundle-request", headers: Self.admin).status
                    == 404)
            // Another site's page cannot ask, even with the admin's credentials in the browser.
            var foreign = Self.admin
            foreign[.origin] = "http://evil.example"
            let refused = try await server.send(
                .post, "/service/api/devices/phone/bundle-request", headers: foreign)
            #expect(refused.status == 403)
            let unasked = try await server.send(.get, "/tables/todoitem", headers: Self.device("phone"))
            #expect(unasked.header("X-TodoSync-Bundle-Request") == nil)
            #expect(
                try await server.send(.post, "/service/api/devices/phone/bundle-request", headers: Self.admin).status
                    == 202)
            let next = try await server.send(.get, "/tables/todoitem", headers: Self.device("phone"))
            #expect(next.header("X-TodoSync-Bundle-Request") == "1")
            var other = Self.device("someone-else")
            other[.contentType] = "application/zip"
            #expect(try await server.send(.post, "/devices/phone/bundle", headers: other, body: zip).status == 403)
            #expect(
                try await server.send(.post, "/devices/phone/bundle", headers: upload, body: Data("text".utf8)).status
                    == 400)
            #expect(try await server.send(.post, "/devices/phone/bundle", headers: upload, body: zip).status == 201)
            let after = try await server.send(.get, "/tables/todoitem", headers: Self.device("phone"))
            #expect(after.header("X-TodoSync-Bundle-Request") == nil)
            let served = try await server.send(.get, "/service/api/devices/phone/bundle", headers: Self.admin)
            #expect(served.status == 200 && served.body == zip)
        }
    }

    @Test("Two PostgreSQL instances agree on a device one of them saw")
    func instancesAgree() async throws {
        guard TestPostgres.isRequired else { return }
        try await Self.withFleet(.postgres) { a in
            try await Self.withFleet(.postgres, sharing: a) { b in
                b.clock.now = a.clock.now
                _ = try await a.send(.get, Self.pull(after: 0), headers: Self.device("seen-by-a"))
                try await whileTimersMove(a, b, until: "b lists the device a saw") {
                    try await !Self.devices(b).isEmpty
                }
                #expect(try await Self.devices(b).first?["id"] as? String == "seen-by-a")
            }
        }
    }

    @Test(
        "A device that moves from one PostgreSQL instance to the other is shown where it pulls last, and the first never saves its older view over it"
    )
    func aRoamingDeviceIsShownWhereItPullsLast() async throws {
        guard TestPostgres.isRequired else { return }
        try await Self.withFleet(.postgres) { a in
            try await Self.withFleet(.postgres, sharing: a) { b in
                b.clock.now = a.clock.now
                try await Self.insert(a, "first")
                _ = try await a.send(.get, Self.pull(after: 0), headers: Self.device("roamer"))
                a.clock.now! += 1000
                b.clock.now = a.clock.now
                _ = try await b.send(.get, Self.pull(after: Self.start + 500), headers: Self.device("roamer"))
                let later = ProtocolDate.format(milliseconds: Self.start + 500)
                @Sendable func position(_ server: TestServer) async throws -> String? {
                    let roamer = try await Self.devices(server).first { $0["id"] as? String == "roamer" }
                    return ((roamer?["tables"] as? [[String: Any]])?.first?["position"] as? String)
                }
                // Three passes of each instance, their clocks moving: an instance that still held the
                // roamer's first position would see its lag grow and save that older view each pass.
                let (startA, startB) = (a.running.service.fleetPasses, b.running.service.fleetPasses)
                try await whileTimersMove(a, b, until: "three passes of each instance") {
                    a.clock.now! += 200
                    b.clock.now = a.clock.now
                    return a.running.service.fleetPasses >= startA + 3 && b.running.service.fleetPasses >= startB + 3
                }
                #expect(try await position(a) == later)
                #expect(try await position(b) == later)
                let stored = try await b.running.service.fleet.store.devices(savedSince: 0)
                #expect(
                    stored.first { $0.record.id == "roamer" }?.record.tables["todoitem"]?.position?.updatedAt == Self
                        .start + 500)
            }
        }
    }

    @Test("A restart keeps each device's history")
    func aRestartKeepsTheDevices() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("tables.sqlite")
        for round in 0..<2 {
            try await withTestServer(
                tables: ["todoitem"],
                configure: {
                    $0.database = .sqlite(path: path)
                    $0.adminKey = Self.adminKey
                }
            ) { server in
                if round == 0 {
                    _ = try await server.send(.get, Self.pull(after: 0), headers: Self.device("kept"))
                } else {
                    let kept = await server.running.service.fleet.records()
                    #expect(kept.map(\.id) == ["kept"])
                    #expect(kept.first?.tables["todoitem"]?.position?.updatedAt == 0)
                }
            }
        }
    }
}

/// A real HTTP receiver of alert webhooks (the project's own server on loopback).
final class WebhookReceiver: Sendable {
    struct Event: Sendable, Decodable {
        var event: String
        var id: String
    }

    /// What arrived, and whether a POST was answered yet.
    private final class Log: Sendable {
        let events = Mutex<[Event]>([])
        let answered = Mutex(false)
    }

    private let server: HTTPServer
    private let log = Log()

    var url: String { server.url }
    var events: [Event] { log.events.withLock { $0 } }

    /// With `failFirst`, the first POST is answered 500.
    init(failFirst: Bool) throws {
        var router = Router()
        let log = log
        router.post("/hook") { request in
            if let event = try? JSONDecoder().decode(Event.self, from: request.body) {
                log.events.withLock { $0.append(event) }
            }
            let fail =
                failFirst
                && log.answered.withLock { done in
                    defer { done = true }
                    return !done
                }
            return Response(status: fail ? .internalServerError : .noContent)
        }
        server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), responder: router.buildResponder())
    }

    func stop() async { await server.stop() }
}

/// Waits until `condition` holds, moving the timers of `servers` (started with `controlledTimers`)
/// a beat of the fleet's bookkeeping at a time meanwhile: their fleet passes, their alerts and
/// the alerts' retries, and what they read of each other, come as the clocks move, not with
/// seconds waited.
func whileTimersMove(
    _ servers: TestServer..., until what: @autoclosure () -> String, _ condition: () async throws -> Bool
) async throws {
    try await eventually(what()) {
        if try await condition() { return true }
        for server in servers { await server.timers.advance(by: FleetBookkeeping.revocationsPeriod) }
        return false
    }
}
