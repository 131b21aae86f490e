import Foundation
import SyncClient
import TableService
import TestSupport
import Testing

@testable import Dashboard

/// `/doctor`: a run in the background against the dashboard's remote, its page, and nothing local changed.
@Suite(.timeLimit(.minutes(10))) struct DoctorPageTests {
    @Test func aDoctorRunIsGreenOnTheEmbeddedServiceAndChangesNothingLocal() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "mine", "text": "kept as it is"])
            let before = (try context.status(), try context.exchanges().exchanges.count)

            let form = try await harness.client.send(.get, "/doctor")
            #expect(form.text.contains(#"value="\#(harness.url)""#), "the address is the dashboard's remote")
            let started = try await harness.submit("/doctor", ["url": harness.url, "table": "todoitem"])
            #expect(started.status == 303)
            #expect(started.headers["location"] == "/doctor/runs/1")
            let run = try #require(await harness.dashboard.doctorRuns.finished(1))
            let page = try await harness.client.send(.get, "/doctor/runs/1")

            #expect(run.report?.isHealthy == true)
            #expect(page.text.contains("9 green, 0 red"))
            #expect(!page.text.contains("http-equiv=\"refresh\""), "a finished run stops reloading")
            #expect(try context.status() == before.0)
            #expect(try context.exchanges().exchanges.count == before.1, "a doctor run records nothing")
            #expect(try context.table("todoitem").item(id: "mine")?["text"] == "kept as it is")
        }
    }

    /// The remote the dashboard syncs with is probed as its syncs reach it: with its key and token.
    @Test func aRunOnTheSecuredRemoteSendsTheDashboardsKeyAndToken() async throws {
        let folder = try TemporaryFolder()
        let signIn = SignIn(secret: "a-doctor-page-secret-of-32-chars!", required: true)
        let service = try await TestService.sqlite(in: folder) { configuration in
            configuration.signIn = signIn
            configuration.applicationKey = "the-remote-key-5d1c"
        }
        let token = try await TokenIssuer.token(for: "alice", signIn: signIn)
        let harness = try await TestDashboard(remote: .url(service.endpoint, applicationKey: "the-remote-key-5d1c")) {
            $0.authToken = token
        }

        let remote = service.endpoint.absoluteString
        #expect(try await harness.submit("/doctor", ["url": remote, "table": "todoitem"]).status == 303)
        let run = try #require(await harness.dashboard.doctorRuns.finished(1))
        let page = try await harness.client.send(.get, "/doctor/runs/1")

        #expect(run.report?.isHealthy == true, "\(run.report?.failures.map(\.verdict.explanation) ?? [])")
        #expect(!page.text.contains(token) && !page.text.contains("the-remote-key-5d1c"))
        await harness.stop()
        await service.stop()
    }

    @Test func aBadAddressIsRefusedWithAMessageAndNoRun() async throws {
        try await withTestDashboard { harness in
            let answer = try await harness.submit("/doctor", ["url": "ftp://example", "table": ""])

            #expect(answer.status == 422)
            #expect(answer.text.contains("is not a web address"))
            #expect(answer.text.contains("Give a table name"))
            #expect(harness.dashboard.doctorRuns.all.isEmpty)
            let missing = try await harness.client.send(.get, "/doctor/runs/7")
            #expect(missing.status == 404)
        }
    }
}
