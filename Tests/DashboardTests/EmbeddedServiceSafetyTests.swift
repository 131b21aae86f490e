import Foundation
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
}
