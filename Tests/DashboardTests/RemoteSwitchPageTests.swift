import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import TableService
import TestSupport
import Testing

/// The Settings page and `/api/settings` move the dashboard's store to another service: asked
/// first while changes are queued, then pushed there or discarded.
@Suite(.timeLimit(.minutes(10)))
struct RemoteSwitchPageTests {
    /// A dashboard (on its embedded service) holding one synced todo and one pending todo, and
    /// another real table service holding two todos of its own.
    struct Setup {
        let harness: TestDashboard
        let other: TestService
        var otherURL: String { other.url }

        init() async throws {
            harness = try await TestDashboard()
            other = try await TestService.sqlite(in: try TemporaryFolder())
            for id in ["b1", "b2"] {
                try await other.rest.insert(["id": .string(id), "text": .string("other \(id)")])
            }
            let table = harness.dashboard.context.table("todoitem")
            try await table.insert(["id": "synced", "text": "synced with the embedded service"])
            _ = try await harness.dashboard.context.push()
            try await table.insert(["id": "pending", "text": "not pushed yet"])
        }

        var context: SyncContext { harness.dashboard.context }

        func ids() throws -> [String] {
            try context.table("todoitem").query().compactMap { $0["id"]?.stringValue }.sorted()
        }

        func stop() async {
            await other.stop()
            await harness.stop()
        }
    }

    @Test func settingsAskHowManyAndPushingThemMovesToTheNewService() async throws {
        let setup = try await Setup()
        let asked = try await setup.harness.submit(
            "/settings", ["remote": setup.otherURL, "key": "", "pageSize": "50", "offline": "false"])
        #expect(asked.status == 409)
        #expect(asked.text.contains(#"<strong data-field="switch-counts">1 change not yet pushed</strong>"#))
        #expect(asked.text.contains(#"name="onSwitch" value="push""#))
        #expect(asked.text.contains(#"name="onSwitch" value="discard""#))
        let token = try await setup.harness.csrfToken()
        #expect(asked.text.components(separatedBy: #"name="_csrf" value="\#(token)""#).count >= 4)
        // Nothing moved yet.
        #expect(try setup.ids() == ["pending", "synced"])
        #expect(try setup.context.operations.all().count == 1)

        let pushed = try await setup.harness.submit(
            "/settings",
            ["remote": setup.otherURL, "key": "", "pageSize": "50", "offline": "false", "onSwitch": "push"])
        #expect(pushed.status == 303)
        let page = try await setup.harness.client.send(.get, "/settings")
        #expect(page.text.contains("1 row of the old service removed"))
        #expect(page.text.contains("1 change will be pushed to the new service"))
        #expect(try setup.ids() == ["pending"])
        #expect(try setup.context.boundService() == ServiceIdentity(url: URL(string: setup.otherURL)!))

        _ = try await setup.harness.submit("/sync", ["back": "/"])
        await setup.harness.dashboard.waitUntilIdle()
        #expect(try setup.ids() == ["b1", "b2", "pending"])
        #expect(try setup.context.operations.all().isEmpty)
        await setup.stop()
    }

    @Test func theAPIAnswers409WithTheCountsThenDiscardsOnRequest() async throws {
        let setup = try await Setup()
        let token = try await setup.harness.csrfToken()
        let refused = try await setup.harness.client.send(
            .post, "/api/settings", json: Data(#"{"remote": "\#(setup.otherURL)"}"#.utf8),
            headers: [CSRFProtection.headerName: token])
        #expect(refused.status == 409)
        let answer = try JSONSerialization.jsonObject(with: refused.body) as? [String: Any]
        #expect(answer?["pending"] as? Int == 1)
        #expect(answer?["choices"] as? [String] == ["push", "discard"])
        #expect((answer?["error"] as? String)?.contains(#""onSwitch": "push" or "discard""#) == true)
        #expect(try setup.ids() == ["pending", "synced"])

        let bad = try await setup.harness.client.send(
            .post, "/api/settings", json: Data(#"{"remote": "\#(setup.otherURL)", "onSwitch": "maybe"}"#.utf8),
            headers: [CSRFProtection.headerName: token])
        #expect(bad.status == 422)

        let discarded = try await setup.harness.client.send(
            .post, "/api/settings", json: Data(#"{"remote": "\#(setup.otherURL)", "onSwitch": "discard"}"#.utf8),
            headers: [CSRFProtection.headerName: token])
        #expect(discarded.status == 200)
        #expect(try setup.ids().isEmpty)
        #expect(try setup.context.operations.all().isEmpty)
        _ = try await setup.context.table("todoitem").pull()
        #expect(try setup.ids() == ["b1", "b2"])
        await setup.stop()
    }

    @Test func savingSettingsOnTheSameServiceNeverAsksNorRemovesAnything() async throws {
        let setup = try await Setup()
        let saved = try await setup.harness.submit(
            "/settings", ["remote": "", "key": "", "pageSize": "20", "offline": "true"])
        #expect(saved.status == 303)
        #expect(try setup.ids() == ["pending", "synced"])
        let token = try await setup.harness.csrfToken()
        let api = try await setup.harness.client.send(
            .post, "/api/settings", json: Data(#"{"remote": "", "offline": false}"#.utf8),
            headers: [CSRFProtection.headerName: token])
        #expect(api.status == 200)
        #expect(try setup.ids() == ["pending", "synced"])
        #expect(try setup.context.operations.all().count == 1)
        await setup.stop()
    }
}
