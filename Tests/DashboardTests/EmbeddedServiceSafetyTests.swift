import Foundation
import SyncClient
import SyncProtocol
import TestSupport
import Testing

/// The dashboard's embedded table service refuses what a page on another site could send, as
/// the dashboard's own forms do.
@Suite struct EmbeddedServiceSafetyTests {
    @Test func crossOriginFormPostToTheEmbeddedServiceWritesNothing() async throws {
        try await withTestDashboard { harness in
            let port = harness.dashboard.server.port
            let body = "text=forged&complete=true"
            let forged = try await RawHTTP.send(
                port: port,
                "POST /tables/todoitem HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://evil.example\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n\(body)")
            #expect(forged.hasPrefix("HTTP/1.1 403"), "\(forged)")
            #expect(forged.contains("application/json"))
            let plain = try await RawHTTP.send(
                port: port,
                "POST /tables/todoitem HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: 16\r\nConnection: close\r\n\r\n{\"text\":\"plain\"}")
            #expect(plain.hasPrefix("HTTP/1.1 415"), "\(plain)")
            let list = try await harness.client.send(
                .get, "/tables/todoitem", headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(list.text == "[]")
        }
    }

    @Test func theEmbeddedServiceTakesWritesFromTheDashboardsOwnOriginOnly() async throws {
        try await withTestDashboard { harness in
            let port = harness.dashboard.server.port
            let other = port == 65535 ? port - 1 : port + 1
            func post(from origin: String, _ text: String) async throws -> String {
                let body = #"{"text":"\#(text)"}"#
                return try await RawHTTP.send(
                    port: port,
                    "POST /tables/todoitem HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: \(origin)\r\n"
                        + "ZUMO-API-VERSION: 2.0.0\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            }
            let foreign = try await post(from: "http://127.0.0.1:\(other)", "from another local app")
            #expect(foreign.hasPrefix("HTTP/1.1 403"), "\(foreign)")
            let own = try await post(from: "http://127.0.0.1:\(port)", "from the dashboard's own page")
            #expect(own.hasPrefix("HTTP/1.1 201"), "\(own)")
            let list = try await harness.client.send(
                .get, "/tables/todoitem", headers: [ProtocolHeader.apiVersion: "2.0.0"])
            #expect(list.text.contains("from the dashboard's own page"))
            #expect(!list.text.contains("from another local app"))
        }
    }

    @Test func theSignInTokenIsSavedButNeverShownBack() async throws {
        try await withTestDashboard { harness in
            let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbi1XeVoy"
            let saved = try await harness.submit("/settings", ["remote": "", "pageSize": "50", "authToken": token])
            #expect(saved.status == 303)
            #expect(harness.dashboard.context.authTokenHint == AuthTokenHint(token))
            let page = try await harness.client.send(.get, "/settings")
            #expect(page.text.contains("…" + token.suffix(4)))
            #expect(!page.text.contains(token))
            #expect(!page.text.contains("c2lnbmF0dXJl"))
            // An empty field keeps the token; signing out removes it.
            _ = try await harness.submit("/settings", ["remote": "", "pageSize": "50", "authToken": ""])
            #expect(harness.dashboard.context.authTokenHint != nil)
            _ = try await harness.submit("/settings", ["remote": "", "pageSize": "50", "signOut": "true"])
            #expect(harness.dashboard.context.authTokenHint == nil)
            let bad = try await harness.submit("/settings", ["remote": "", "pageSize": "50", "authToken": "two words"])
            #expect(bad.status == 422)
        }
    }
}
