import Foundation
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// Remote diagnosis (docs/fleet.md): a service's admin asks for a device's support bundle, and
/// the device's dashboard uploads it on its next contact, redacted, while it reports its queue.
@Suite(.timeLimit(.minutes(10))) struct RequestedBundleTests {
    static let key = "app-KEY-0123456789"
    static let token = "token-SECRET-987654321"
    static let adminKey = "admin-KEY-0123456789abcdef"

    @Test func aRequestedBundleArrivesOnTheNextContactAndHoldsNoSecret() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder) {
            $0.applicationKey = Self.key
            $0.adminKey = Self.adminKey
            $0.templatesFolder = ProjectResources.templatesFolder
        }
        let remote = try #require(URL(string: service.running.url))
        let live = try await TestDashboard(remote: .url(remote, applicationKey: Self.key)) {
            $0.authToken = Self.token
        }
        let context = live.dashboard.context
        try await context.table("todoitem").insert(["id": "a", "text": "first"])
        #expect(try await live.submit("/sync", [:]).status == 303)
        await live.dashboard.waitUntilIdle()
        try await context.table("todoitem").insert(["id": "b", "text": "queued"])

        let admin = TestHTTPClient()
        let base = service.running.url + "/service/api/devices/" + context.installationID
        let asked = try await admin.send(
            .post, base + "/bundle-request", headers: [.authorization: "Bearer \(Self.adminKey)"])
        #expect(asked.status == 202)
        // The next contact: the answer asks for the bundle, and the dashboard sends it.
        #expect(try await live.submit("/sync", [:]).status == 303)
        await live.dashboard.waitUntilIdle()
        await context.reporting.finishUploads()

        let bundle = try await admin.send(.get, base + "/bundle", headers: [.authorization: "Bearer \(Self.adminKey)"])
        #expect(bundle.status == 200)
        for secret in [Self.key, Self.token] { #expect(bundle.body.range(of: Data(secret.utf8)) == nil) }
        let file = folder.url.appendingPathComponent("requested.zip")
        try bundle.body.write(to: file)
        let opened = try SupportBundle.open(file, under: folder.url)
        #expect(opened.manifest.madeBy == "dashboard")
        for name in try FileManager.default.contentsOfDirectory(atPath: opened.folder.path) {
            let bytes = try Data(contentsOf: opened.folder.appendingPathComponent(name))
            for secret in [Self.key, Self.token] { #expect(bytes.range(of: Data(secret.utf8)) == nil) }
        }

        // What the device said of itself came with its requests.
        let device = try await admin.send(.get, base, headers: [.authorization: "Bearer \(Self.adminKey)"])
        let reported = try #require(
            (try JSONSerialization.jsonObject(with: device.body) as? [String: Any])?["reported"] as? [String: Any])
        #expect(reported["queue"] as? Int != nil && reported["conflicts"] as? Int == 0)
        #expect(
            ((try JSONSerialization.jsonObject(with: device.body) as? [String: Any])?["bundle"] as? [String: Any])?[
                "receivedAt"] != nil)

        await live.stop()
        await service.running.stop()
        folder.remove()
    }
}
