import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// The Sync state section of `/settings`: the table protocol and the delta tokens, with Reset.
@Suite(.timeLimit(.minutes(10))) struct SyncStatePageTests {
    @Test func theProtocolIsChosenSavedAndSpoken() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            _ = try await context.table("todoitem").pull(queryId: "dashboard")
            let before = try await harness.client.send(.get, "/settings")
            #expect(before.text.contains(#"<option value="auto" selected>"#))
            #expect(before.text.contains("Speaking Mobile Apps v2 (2.0.0) with the service."), "auto asked the service")

            let saved = try await harness.submit("/settings/protocol", ["protocol": "v3"])
            #expect(saved.status == 303)
            #expect(context.tableProtocol == .v3 && context.protocolChoice == .v3)
            try await context.table("todoitem").insert(["id": "a", "text": "over v3"])
            _ = try await context.push()
            #expect(try context.exchanges(ExchangeQuery(limit: 1)).exchanges.first?.method == "POST")
            #expect(
                try context.exchanges(ExchangeQuery(limit: 1)).exchanges.first?.requestHeaders.contains("3.0.0") == true
            )
            let settings = try String(
                contentsOf: harness.folder.appendingPathComponent("settings.json"), encoding: .utf8)
            #expect(settings.contains(#""tableProtocol" : "v3""#))

            let bad = try await harness.submit("/settings/protocol", ["protocol": "v9"])
            #expect(bad.status == 422 && bad.text.contains("protocol must be"))
            #expect(context.protocolChoice == .v3)
        }
    }

    @Test func theAPISettingsReadAndSetTheProtocol() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            let token = try await harness.csrfToken()
            let set = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"protocol": "v3"}"#.utf8),
                headers: [CSRFProtection.headerName: token]
            )
            #expect(set.status == 200)
            #expect(context.protocolChoice == .v3)
            let read = try await harness.client.send(.get, "/api/settings")
            #expect(read.text.contains(#""protocol":"v3""#) && read.text.contains(#""spoken":"v3""#))

            let bad = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"protocol": "v4"}"#.utf8),
                headers: [CSRFProtection.headerName: token]
            )
            #expect(bad.status == 422 && bad.text.contains(#"protocol must be \"auto\", \"v2\" or \"v3\"."#))
            #expect(context.protocolChoice == .v3)
        }
    }

    @Test func aTokenIsListedAndResetKeepsPendingChanges() async throws {
        try await withTestDashboard { harness in
            let context = harness.dashboard.context
            try await context.table("todoitem").insert(["id": "a", "text": "one"])
            _ = try await context.push()
            _ = try await context.table("todoitem").pull(queryId: "dashboard")
            try await context.table("todoitem").update(["id": "a", "text": "edited, not pushed"])
            let page = try await harness.client.send(.get, "/settings")
            #expect(page.text.contains(#"<td class="mono" data-label="Query id">dashboard</td>"#))

            let reset = try await harness.submit(
                "/settings/tokens/reset", ["table": "todoitem", "queryId": "dashboard"])
            #expect(reset.status == 303)
            #expect(try context.deltaTokens().isEmpty)
            #expect(try context.status().pending == 1)
            let after = try await harness.client.send(.get, "/settings")
            #expect(after.text.contains("No incremental pull has run yet"))
            let unknown = try await harness.submit("/settings/tokens/reset", ["table": "nope"])
            #expect(unknown.status == 404)
        }
    }
}
