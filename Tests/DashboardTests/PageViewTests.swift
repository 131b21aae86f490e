import Foundation
import TestSupport
import Testing

@testable import Dashboard

/// Each page's context is one typed value: the HTML and the JSON of a page come from it.
@Suite(.timeLimit(.minutes(2))) struct PageViewTests {
    /// The JSON of a page, as a script asks for it.
    func json(_ harness: TestDashboard, _ path: String) async throws -> [String: Any] {
        let answer = try await harness.client.send(.get, path, headers: [.accept: "application/json"])
        #expect(answer.status == 200, "\(path)")
        #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true, "\(path)")
        return try JSONSerialization.jsonObject(with: answer.body) as? [String: Any] ?? [:]
    }

    @Test func everyPageIsTheSameValueAsHTMLAndAsJSON() async throws {
        let harness = try await TestDashboard()
        _ = try await harness.submit("/items", ["text": "buy <milk>"])
        let list = try await json(harness, "/")
        let page = list["page"] as? [String: Any]
        let rows = page?["rows"] as? [[String: Any]]
        #expect(rows?.first?["text"] as? String == "buy <milk>")
        #expect((rows?.first?["badge"] as? [String: Any])?["label"] as? String == "pending insert")
        let html = try await harness.client.send(.get, "/").text
        #expect(html.contains("buy &lt;milk&gt;"))
        for path in ["/operations", "/conflicts", "/settings"] {
            let view = try await json(harness, path)
            #expect(view["page"] != nil, "\(path)")
            #expect((view["header"] as? [String: Any])?["pending"] as? Int == 1, "\(path)")
        }
        await harness.stop()
    }

    @Test func theHeaderOfAPageAndOfTheStatusAPIAreOneType() async throws {
        let harness = try await TestDashboard()
        _ = try await harness.submit("/items", ["text": "one"])
        let page = try await json(harness, "/")
        var header = page["header"] as? [String: Any] ?? [:]
        let status = try await harness.client.send(.get, "/api/status")
        var api = try JSONSerialization.jsonObject(with: status.body) as? [String: Any] ?? [:]
        #expect(api.removeValue(forKey: "csrfToken") != nil)
        // The page's header names its embedded service page; the API answers for scripts without it.
        header["servicePage"] = nil
        #expect(Set(header.keys) == Set(api.keys))
        for key in ["remote", "state", "stateLabel", "progress", "conflictsWord"] {
            #expect(header[key] as? String == api[key] as? String, "\(key)")
        }
        for key in ["pending", "conflicts", "refused"] { #expect(header[key] as? Int == api[key] as? Int, "\(key)") }
        #expect(header["stateLabel"] as? String == "Not contacted yet")
        #expect(header["pending"] as? Int == 1)
        await harness.stop()
    }
}
