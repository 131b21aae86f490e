import Foundation
import TestSupport
import Testing

@testable import Dashboard

/// One JSON surface: the pages answer HTML only, and `/api/...` says in JSON what they show.
@Suite(.timeLimit(.minutes(10))) struct PageViewTests {
    func json(_ harness: TestDashboard, _ path: String) async throws -> [String: Any] {
        let answer = try await harness.client.send(.get, path)
        #expect(answer.status == 200, "\(path)")
        #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true, "\(path)")
        return try JSONSerialization.jsonObject(with: answer.body) as? [String: Any] ?? [:]
    }

    @Test func theListAndTheDataAPIShowTheSameRowsAndSyncStates() async throws {
        try await withTestDashboard { harness in
            _ = try await harness.submit("/items", ["field:text": "buy <milk>"])
            let rows = try await json(harness, "/api/data/todoitem")
            let item = try #require((rows["items"] as? [[String: Any]])?.first)
            #expect(item["text"] as? String == "buy <milk>")
            let id = try #require(item["id"] as? String)
            #expect((rows["syncStates"] as? [String: String])?[id] == "pending insert")
            let html = try await harness.client.send(.get, "/").text
            #expect(html.contains("buy &lt;milk&gt;") && html.contains("pending insert"))
        }
    }

    @Test func pagesAnswerHTMLEvenWhenJSONIsAskedFor() async throws {
        try await withTestDashboard { harness in
            for path in ["/", "/data", "/operations", "/conflicts", "/settings"] {
                let page = try await harness.client.send(.get, path, headers: [.accept: "application/json"])
                #expect(page.status == 200, "\(path)")
                #expect(page.headers["content-type"]?.hasPrefix("text/html") == true, "\(path)")
            }
            let missing = try await harness.client.send(.get, "/items/nope", headers: [.accept: "application/json"])
            #expect(missing.status == 404 && missing.headers["content-type"]?.hasPrefix("text/html") == true)
            let api = try await harness.client.send(.get, "/api/data/todoitem/nope")
            #expect(api.status == 404 && api.headers["content-type"]?.hasPrefix("application/json") == true)
        }
    }

    @Test func theHeaderOfAPageSaysWhatTheStatusAPISays() async throws {
        try await withTestDashboard { harness in
            _ = try await harness.submit("/items", ["field:text": "one"])
            let status = try await json(harness, "/api/status")
            #expect(status["stateLabel"] as? String == "Not contacted yet")
            #expect(status["pending"] as? Int == 1)
            #expect(status["csrfToken"] as? String != nil)
            let page = try await harness.client.send(.get, "/operations").text
            #expect(page.contains(#"<span data-field="stateLabel">Not contacted yet</span>"#))
            #expect(page.contains(#"<span data-field="pending">1</span>"#))
        }
    }
}
