import Foundation
import HTTPServer
import HTTPTypes
import Synchronization
import TestSupport
import Testing

@testable import Dashboard

/// Bound off loopback, the dashboard asks who you are: every route needs a session, a viewer
/// changes nothing, failed sign-ins are limited. On loopback nothing is asked.
@Suite(.timeLimit(.minutes(10))) struct AccessTests {
    static let operatorToken = "operator-token-0123456789"
    static let viewerToken = "viewer-token-0123456789"

    /// A dashboard bound to every interface, with a standing token per role.
    static func exposed(clock: ManualWallClock = ManualWallClock()) async throws -> TestDashboard {
        try await TestDashboard { configuration in
            configuration.host = "0.0.0.0"
            configuration.accessTokens = [operatorToken: .operator, viewerToken: .viewer]
            configuration.clock = clock
        }
    }

    /// A browser of its own (its own cookies), through 127.0.0.1.
    static func browser(_ harness: TestDashboard) -> BrowserClient {
        BrowserClient(base: "http://127.0.0.1:\(harness.dashboard.server.port)")
    }

    /// A browser signed in with `token`.
    static func signedIn(_ harness: TestDashboard, _ token: String) async throws -> BrowserClient {
        let browser = browser(harness)
        let answer = try await browser.send(.post, "/sign-in", form: ["token": token, "next": "/"])
        #expect(answer.status == 303, "\(answer.text)")
        return browser
    }

    /// `pattern` with a value in each parameter, such as `/data/x/x`.
    static func path(_ pattern: String) -> String {
        "/"
            + pattern.split(separator: "/").map { $0.hasPrefix(":") || $0 == "*" ? "x" : String($0) }
            .joined(separator: "/")
    }

    static func csrfToken(_ browser: BrowserClient) async throws -> String {
        let status = try await browser.send(.get, "/api/status")
        let object = try JSONSerialization.jsonObject(with: status.body) as? [String: Any]
        return object?["csrfToken"] as? String ?? ""
    }

    static let open: Set<String> = ["/sign-in", "/public/*"]

    @Test func everyRouteAsksWhoYouAreOffLoopback() async throws {
        let harness = try await Self.exposed()
        let browser = Self.browser(harness)
        let routes = harness.dashboard.server.routeList.filter { !Self.open.contains($0.pattern) }
        #expect(routes.count > 50)
        for (method, pattern) in routes {
            let answer = try await browser.send(method, Self.path(pattern))
            let isPage =
                method == .get && !["/api/", "/tables", "/metrics"].contains { pattern.hasPrefix($0) }
            if isPage {
                #expect(answer.status == 303, "\(method) \(pattern)")
                #expect(answer.headers["location"]?.hasPrefix("/sign-in?next=") == true, "\(method) \(pattern)")
            } else {
                #expect(answer.status == 401, "\(method) \(pattern): \(answer.status)")
            }
        }
        await harness.stop()
    }

    @Test func aViewerReadsButEveryStateChangingRouteAnswers403() async throws {
        let harness = try await Self.exposed()
        let viewer = try await Self.signedIn(harness, Self.viewerToken)
        #expect(try await viewer.send(.get, "/").status == 200)
        let token = try await Self.csrfToken(viewer)
        #expect(!token.isEmpty)
        let changing = harness.dashboard.server.routeList.filter {
            ![.get, .head, .options].contains($0.method) && !Self.open.contains($0.pattern)
                && $0.pattern != "/sign-out"
        }
        #expect(changing.count > 30)
        for (method, pattern) in changing {
            let answer = try await viewer.send(
                method, Self.path(pattern), form: ["_csrf": token], headers: [CSRFProtection.headerName: token])
            #expect(answer.status == 403, "\(method) \(pattern): \(answer.status)")
        }
        #expect(try harness.dashboard.context.operations.all().isEmpty)
        await harness.stop()
    }

    @Test func theLinkPrintedAtStartSignsInOnceAsAnOperator() async throws {
        let harness = try await Self.exposed()
        let link = try #require(harness.dashboard.signInLink)
        let token = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "token" }?.value)
        #expect(!link.contains("0.0.0.0"), "a browser cannot open \(link)")
        let browser = Self.browser(harness)
        let form = try await browser.send(.get, "/sign-in?token=\(token)")
        #expect(form.status == 200 && form.text.contains(#"value="\#(token)""#))
        #expect(!form.text.contains("csrf"), "the sign-in page shows nothing of the dashboard")

        let signedIn = try await browser.send(.post, "/sign-in", form: ["token": token, "next": "/operations"])
        #expect(signedIn.status == 303 && signedIn.headers["location"] == "/operations")
        let cookie = try #require(signedIn.headers["set-cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        #expect(try await browser.send(.get, "/").status == 200)
        let csrf = try await Self.csrfToken(browser)
        let synced = try await browser.send(.post, "/sync", form: ["_csrf": csrf, "back": "/"])
        #expect(synced.status == 303, "an operator changes things")

        let again = try await Self.browser(harness).send(.post, "/sign-in", form: ["token": token])
        #expect(again.status == 401, "a one-time link signs in once")
        await harness.stop()
    }

    @Test func sessionsExpireAndEndingThemAllSignsEveryoneOut() async throws {
        let clock = ManualWallClock()
        let harness = try await Self.exposed(clock: clock)
        let first = try await Self.signedIn(harness, Self.operatorToken)
        clock.advance(by: 13 * 3600)
        #expect(try await first.send(.get, "/").status == 303, "expired after 12 hours")

        let a = try await Self.signedIn(harness, Self.operatorToken)
        let b = try await Self.signedIn(harness, Self.viewerToken)
        let csrf = try await Self.csrfToken(a)
        let ended = try await a.send(.post, "/settings/access/end", form: ["_csrf": csrf])
        #expect(ended.status == 303 && ended.headers["location"] == "/sign-in")
        #expect(try await a.send(.get, "/").status == 303)
        #expect(try await b.send(.get, "/api/status").status == 401)
        _ = try await Self.signedIn(harness, Self.operatorToken)
        await harness.stop()
    }

    @Test func anOperatorMakesAViewersLinkOnTheSettingsPage() async throws {
        let harness = try await Self.exposed()
        let operatorBrowser = try await Self.signedIn(harness, Self.operatorToken)
        let settings = try await operatorBrowser.send(.get, "/settings")
        #expect(settings.text.contains("Make a one-time sign-in link"))
        let csrf = try await Self.csrfToken(operatorBrowser)
        let made = try await operatorBrowser.send(
            .post, "/settings/access/link", form: ["_csrf": csrf, "role": "viewer"])
        #expect(made.status == 303)
        let page = try await operatorBrowser.send(.get, "/settings").text
        let token = try #require(page.firstMatch(of: /sign-in\?token=([0-9a-f]{64})/)?.output.1)
        let viewer = try await Self.signedIn(harness, String(token))
        #expect(try await viewer.send(.post, "/sync", form: ["_csrf": csrf]).status == 403)
        await harness.stop()
    }

    @Test func failedSignInsAreLimitedPerAddressAndSayNothingOfSessions() async throws {
        let clock = ManualWallClock()
        let harness = try await Self.exposed(clock: clock)
        let browser = Self.browser(harness)
        let before = try await browser.send(.post, "/sign-in", form: ["token": "wrong-token-aaaaaaaa"])
        _ = try await Self.signedIn(harness, Self.operatorToken)
        let after = try await browser.send(.post, "/sign-in", form: ["token": "wrong-token-aaaaaaaa"])
        #expect(before.status == 401 && after.status == 401 && before.text == after.text)
        for _ in 0..<3 { _ = try await browser.send(.post, "/sign-in", form: ["token": "wrong"]) }
        let limited = try await browser.send(.post, "/sign-in", form: ["token": Self.operatorToken])
        #expect(limited.status == 429 && limited.headers["retry-after"] != nil)
        clock.advance(by: 61)
        _ = try await Self.signedIn(harness, Self.operatorToken)
        await harness.stop()
    }

    @Test func aPageOfAnotherSiteCannotSignInNorLeadElsewhere() async throws {
        let harness = try await Self.exposed()
        let browser = Self.browser(harness)
        let forged = try await browser.send(
            .post, "/sign-in", form: ["token": Self.operatorToken], headers: [.origin: "http://evil.example"])
        #expect(forged.status == 403 && forged.headers["set-cookie"]?.contains(SignInSessions.cookieName) != true)
        let elsewhere = try await browser.send(
            .post, "/sign-in", form: ["token": Self.operatorToken, "next": "//evil.example/"])
        #expect(elsewhere.headers["location"] == "/")
        await harness.stop()
    }

    /// Over HTTPS (a CA made for the test): the session cookie is `Secure`, the printed link says
    /// `https://`, and the dashboard's own sync reaches its embedded service through TLS too.
    @Test func overHTTPSTheSessionCookieIsSecureAndTheEmbeddedServiceSyncs() async throws {
        let folder = try TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let certificateFile = folder.file("server.pem")
        try certificates.server.certificate.write(toFile: certificateFile, atomically: true, encoding: .utf8)
        try await withTestDashboard(configure: { configuration in
            configuration.host = "0.0.0.0"
            configuration.accessTokens = [Self.operatorToken: .operator]
            configuration.tls = certificates.server
            configuration.caFile = certificates.caFile
            configuration.tlsCertificateFile = certificateFile
        }) { harness in
            #expect(harness.dashboard.signInLink?.hasPrefix("https://") == true)
            let browser = BrowserClient(
                base: "https://127.0.0.1:\(harness.dashboard.server.port)", caFile: certificates.caFile)
            let signedIn = try await browser.send(.post, "/sign-in", form: ["token": Self.operatorToken, "next": "/"])
            #expect(signedIn.status == 303 && signedIn.headers["set-cookie"]?.contains("; Secure") == true)
            try await harness.dashboard.context.table("todoitem").insert([
                "id": "over-tls", "text": "synced through TLS",
            ])
            let csrf = try await Self.csrfToken(browser)
            #expect(try await browser.send(.post, "/sync", form: ["_csrf": csrf, "back": "/"]).status == 303)
            await harness.dashboard.waitUntilIdle()
            #expect(try harness.dashboard.context.operations.all().isEmpty)
            #expect(harness.dashboard.context.lastSync?.stopReason == nil)
        }
    }

    @Test func onLoopbackNothingIsAsked() async throws {
        try await withTestDashboard { harness throws in
            #expect(harness.dashboard.signInLink == nil)
            #expect(try await harness.client.send(.get, "/").status == 200)
            #expect(try await harness.client.send(.get, "/api/status").status == 200)
        }
    }
}

/// `--access-token-file`: a token a line, optionally after its role.
@Suite struct AccessTokenFileTests {
    @Test func readsRolesAndRefusesShortTokensWithTheLine() throws {
        let tokens = try AccessTokenFile.parse(
            "# team\noperator-token-0123456789\nviewer viewer-token-0123456789\n", path: "f")
        #expect(tokens == ["operator-token-0123456789": .operator, "viewer-token-0123456789": .viewer])
        #expect(throws: AccessTokenFile.Refusal.self) { try AccessTokenFile.parse("short\n", path: "f") }
        do {
            _ = try AccessTokenFile.parse("ok-token-0123456789\nadmin x-token-0123456789\n", path: "f")
        } catch {
            #expect(error.description.contains("line 2"))
        }
        #expect(throws: AccessTokenFile.Refusal.self) { try AccessTokenFile.parse("\n# none\n", path: "f") }
    }
}
