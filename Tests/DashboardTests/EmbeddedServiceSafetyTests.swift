import Foundation
import SyncClient
import TestSupport
import Testing

/// The dashboard's embedded table service refuses what a page on another site could send, as
/// the dashboard's own forms do.
@Suite struct EmbeddedServiceSafetyTests {
    @Test func crossOriginFormPostToTheEmbeddedServiceWritesNothing() async throws {
        let harness = try await DashboardHarness()
        let port = harness.dashboard.server.port
        let body = "text=forged&complete=true"
        let forged = try RawHTTP.exchange(
            port: port,
            "POST /tables/todoitem HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://evil.example\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n\(body)")
        #expect(forged.hasPrefix("HTTP/1.1 403"), "\(forged)")
        #expect(forged.contains("application/json"))
        let plain = try RawHTTP.exchange(
            port: port,
            "POST /tables/todoitem HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: text/plain\r\n"
                + "Content-Length: 16\r\nConnection: close\r\n\r\n{\"text\":\"plain\"}")
        #expect(plain.hasPrefix("HTTP/1.1 415"), "\(plain)")
        let list = try await harness.client.send(
            "GET", "/tables/todoitem", headers: ["ZUMO-API-VERSION": "2.0.0"])
        #expect(list.text == "[]")
        await harness.stop()
    }

    @Test func theSignInTokenIsSavedButNeverShownBack() async throws {
        let harness = try await DashboardHarness()
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbi1XeVoy"
        let saved = try await harness.submit("/settings", ["remote": "", "pageSize": "50", "authToken": token])
        #expect(saved.status == 303)
        #expect(harness.dashboard.context.authTokenHint == AuthTokenHint(token))
        let page = try await harness.client.send("GET", "/settings")
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
        await harness.stop()
    }
}
