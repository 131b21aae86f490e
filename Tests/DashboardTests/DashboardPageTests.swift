import FaultProxy
import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

@Suite(.timeLimit(.minutes(10))) struct DashboardPageTests {
    @Test func everyPageAnswersWithTheSecurityHeaders() async throws {
        try await withTestDashboard { harness in
            for path in [
                "/", "/operations", "/conflicts", "/settings", "/?show=active", "/?q=milk&older=5", "/?at=last",
            ] {
                let page = try await harness.client.send(.get, path)
                #expect(page.status == 200, "\(path)")
                #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
                #expect(page.headers["x-frame-options"] == "DENY")
                #expect(page.headers["x-content-type-options"] == "nosniff")
            }
        }
    }

    @Test func postWithoutOrWithWrongCSRFTokenIsRefusedAndStoresNothing() async throws {
        try await withTestDashboard { harness in
            let missing = try await harness.client.send(.post, "/items", form: ["field:text": "forged"])
            #expect(missing.status == 403)
            let wrong = try await harness.client.send(.post, "/items", form: ["field:text": "forged", "_csrf": "0123"])
            #expect(wrong.status == 403)
            let api = try await harness.client.send(.post, "/api/data/todoitem", json: Data(#"{"text":"forged"}"#.utf8))
            #expect(api.status == 403)
            #expect(try harness.dashboard.context.table("todoitem").count() == 0)
        }
    }

    @Test func foreignHostIsRefused() async throws {
        try await withTestDashboard { harness in
            let port = harness.dashboard.server.port
            let raw = try await RawHTTP.send(
                port: port, "GET / HTTP/1.1\r\nHost: attacker.example:\(port)\r\nConnection: close\r\n\r\n")
            #expect(raw.hasPrefix("HTTP/1.1 421"))
            let local = try await RawHTTP.send(
                port: port, "GET / HTTP/1.1\r\nHost: localhost:\(port)\r\nConnection: close\r\n\r\n")
            #expect(local.hasPrefix("HTTP/1.1 200"))
            // An address cannot be rebound: a server listening on every interface answers by address.
            let address = try await RawHTTP.send(
                port: port, "GET / HTTP/1.1\r\nHost: 192.168.1.5:\(port)\r\nConnection: close\r\n\r\n")
            #expect(address.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func addingATodoRedirectsAndShowsItEscapedWithAPendingBadge() async throws {
        try await withTestDashboard { harness in
            let hostile = "<img src=x onerror=alert(1)>"
            let added = try await harness.submit("/items", ["field:text": hostile])
            #expect(added.status == 303)
            #expect(added.headers["location"] == "/")
            let list = try await harness.client.send(.get, "/")
            #expect(list.text.contains("&lt;img src=x onerror=alert(1)&gt;"))
            #expect(!list.text.contains(hostile))
            #expect(list.text.contains("pending insert"))
            #expect(list.text.contains("Added “&lt;img"))
        }
    }

    @Test(arguments: ["", "   ", String(repeating: "x", count: 1001)])
    func invalidTextShowsTheFormAgainAndStoresNothing(text: String) async throws {
        try await withTestDashboard { harness in
            let answer = try await harness.submit("/items", ["field:text": text])
            #expect(answer.status == 422)
            #expect(answer.text.contains("field-error"))
            #expect(
                answer.text.contains(
                    text.isEmpty || text.trimmingCharacters(in: .whitespaces).isEmpty
                        ? "cannot be empty" : "1000 characters"))
            #expect(try harness.dashboard.context.table("todoitem").count() == 0)
        }
    }

    @Test func unknownItemIsA404PageWithAdvice() async throws {
        try await withTestDashboard { harness in
            let page = try await harness.client.send(.get, "/items/no-such-id")
            #expect(page.status == 404)
            #expect(page.text.contains("no todo with the id “no-such-id”"))
            let json = try await harness.client.send(.get, "/api/data/todoitem/no-such-id")
            #expect(json.status == 404)
            #expect(json.headers["content-type"]?.hasPrefix("application/json") == true)
        }
    }

    @Test func editingAndDeletingChangeOnlyTheLocalStoreAndQueue() async throws {
        try await withTestDashboard { harness in
            let table = harness.dashboard.context.table("todoitem")
            let item = try await table.insert(["text": "first", "complete": false])
            let id = item["id"]?.stringValue ?? ""
            let saved = try await harness.submit("/items/\(id)", ["field:text": "second", "field:complete": "true"])
            #expect(saved.status == 303)
            #expect(try table.item(id: id)?["text"] == .string("second"))
            #expect(try table.item(id: id)?["complete"] == .bool(true))
            #expect(try harness.dashboard.context.operations.all().count == 1)
            // Without a script to ask, the first press shows a confirmation page and deletes nothing.
            let asked = try await harness.submit("/items/\(id)/delete", [:])
            #expect(asked.status == 200)
            #expect(asked.text.contains("Delete this todo?"))
            #expect(try table.item(id: id) != nil)
            let deleted = try await harness.submit("/items/\(id)/delete", ["confirm": "yes"])
            #expect(deleted.status == 303)
            #expect(try table.item(id: id) == nil)
            // insert → update → delete collapses to nothing to send.
            #expect(try harness.dashboard.context.operations.all().isEmpty)
        }
    }

    @Test func syncRunsInTheBackgroundAndReportsItsResult() async throws {
        try await withTestDashboard { harness in
            _ = try await harness.dashboard.context.table("todoitem").insert([
                "text": "to the service", "complete": false,
            ])
            let token = try await harness.csrfToken()
            let started = try await harness.client.send(.post, "/api/sync", headers: [CSRFProtection.headerName: token])
            #expect(started.status == 202)
            await harness.dashboard.waitUntilIdle()
            let service = try await harness.client.send(
                .get, "/tables/todoitem", headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(service.text.contains("to the service"))
            let page = try await harness.client.send(.get, "/")
            #expect(page.text.contains("Pushed 1 change"))
            #expect(try harness.dashboard.context.status().pending == 0)
        }
    }

    @Test func secondSyncWhileOneRunsJoinsItAndBothBrowsersSeeTheResult() async throws {
        try await withTestDashboard { harness in
            // A remote that holds its answers until the test lets them go, so the first sync is still
            // running: the embedded service behind a proxy.
            let released = TestEvent()
            let slow = try await FaultProxy(upstream: harness.url)
            slow.intercept { _, _ in
                await released.wait()
                return nil
            }
            try await harness.dashboard.context.setRemote(url: slow.endpoint, applicationKey: nil)
            let other = BrowserClient(base: harness.dashboard.url)
            let token = try await harness.csrfToken()
            let first = try await harness.client.send(.post, "/api/sync", headers: [CSRFProtection.headerName: token])
            let second = try await other.send(.post, "/api/sync", headers: [CSRFProtection.headerName: token])
            #expect(first.text.contains(#""started":true"#))
            #expect(second.text.contains(#""started":false"#))
            let status = try await other.send(.get, "/api/status")
            #expect(status.text.contains(#""running":true"#))
            released.signal()
            await harness.dashboard.waitUntilIdle()
            #expect(try await harness.client.send(.get, "/").text.contains("Pulled 0 rows"))
            #expect(try await other.send(.get, "/").text.contains("Pulled 0 rows"))
            await slow.stop()
        }
    }

    @Test func formSyncRedirectsBackOnlyToLocalPaths() async throws {
        try await withTestDashboard { harness in
            let local = try await harness.submit("/sync", ["back": "/operations"])
            #expect(local.status == 303)
            #expect(local.headers["location"] == "/operations")
            let foreign = try await harness.submit("/sync", ["back": "//evil.example/"])
            #expect(foreign.headers["location"] == "/")
            await harness.dashboard.waitUntilIdle()
        }
    }

    @Test func settingsRejectABadAddressAndKeepTheOldOne() async throws {
        try await withTestDashboard { harness in
            let before = harness.dashboard.context.remoteURL
            let answer = try await harness.submit(
                "/settings", ["remote": "not a url", "pageSize": "5000", "offline": "false"])
            #expect(answer.status == 422)
            #expect(answer.text.contains("is not a web address"))
            #expect(answer.text.contains("from 1 to 1000"))
            #expect(harness.dashboard.context.remoteURL == before)
            let key = try await harness.submit("/settings", ["remote": "", "key": "line\nbreak", "pageSize": "50"])
            #expect(key.status == 422)
            #expect(key.text.contains("must be one line"))
        }
    }

    @Test func theSettingsFormAndTheAPIRefuseEachMistakeWithTheSameStatusAndMessage() async throws {
        try await withTestDashboard { harness in
            let token = try await harness.csrfToken()
            let mistakes: [(form: [String: String], json: String, message: String)] = [
                (["key": "line\nbreak"], #"{"remote": "", "applicationKey": "line\nbreak"}"#, "must be one line"),
                (["onSwitch": "maybe"], #"{"remote": "", "onSwitch": "maybe"}"#, "onSwitch must be"),
                (["pageSize": "0"], #"{"pageSize": 0}"#, "from 1 to 1000"),
                (["remote": "ftp://x"], #"{"remote": "ftp://x"}"#, "is not a web address"),
            ]
            for mistake in mistakes {
                let form = try await harness.submit(
                    "/settings", ["remote": "", "pageSize": "50"].merging(mistake.form) { $1 })
                #expect(form.status == 422, "\(mistake.form)")
                #expect(form.text.contains(mistake.message), "\(mistake.form)")
                let api = try await harness.client.send(
                    .post, "/api/settings", json: Data(mistake.json.utf8), headers: [CSRFProtection.headerName: token])
                #expect(api.status == 422, "\(mistake.json)")
                #expect(api.text.contains(mistake.message), "\(mistake.json)")
            }
            let misspelt = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"pageSise": 20}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(misspelt.status == 422 && misspelt.text.contains("'pageSise' is not a setting"))
        }
    }

    @Test func thePushWindowIsSavedAndTakesEffectAndABadOneIsRefused() async throws {
        try await withTestDashboard { harness in
            #expect(await harness.dashboard.context.pushWindow == SyncConfiguration.defaultPushWindow)
            let refused = try await harness.submit("/settings", ["remote": "", "pageSize": "50", "pushWindow": "0"])
            #expect(refused.status == 422)
            #expect(refused.text.contains("from 1 to 64"))
            #expect(await harness.dashboard.context.pushWindow == SyncConfiguration.defaultPushWindow)
            let saved = try await harness.submit("/settings", ["remote": "", "pageSize": "50", "pushWindow": "4"])
            #expect(saved.status == 303)
            #expect(await harness.dashboard.context.pushWindow == 4)
            #expect(
                try await harness.client.send(.get, "/settings").text.contains(
                    #"name="pushWindow" min="1" max="64" value="4""#))
        }
    }
}
