import Foundation
import HTTPServer
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// Pages that follow the store: a page's own address, asked for `text/event-stream` (as its
/// script's `EventSource` does), sends the page's fragments as the store changes, rendered by the
/// page's own partials.
@Suite(.timeLimit(.minutes(10))) struct LivePageTests {
    /// The HTML of a `fragments` event's fragments.
    func fragments(_ event: ReceivedEvent?) throws -> [String] {
        let event = try #require(event)
        #expect(event.event == "fragments")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any])
        return try #require(body["fragments"] as? [String])
    }

    /// A client for the streams, kept for as long as the suite's value lives (its end closes them).
    let events = TestHTTPClient()

    func insert(_ harness: TestDashboard, _ text: String) async throws -> String {
        let item = try await harness.dashboard.context.table("todoitem").insert(["text": .string(text)])
        return try #require(item["id"]?.stringValue)
    }

    @Test func theFirstEventHoldsWhatAReloadOfThePageShows() async throws {
        try await withTestDashboard { harness in
            _ = try await insert(harness, "Buy milk")
            let stream = try await events.events(harness.url + "/?show=active")
            #expect(stream.status == 200)
            #expect(stream.headers.first(name: "Content-Type")?.hasPrefix("text/event-stream") == true)
            let first = try fragments(try await stream.next())
            let page = try await harness.client.send(.get, "/?show=active")
            #expect(first.count == 2)
            for fragment in first {
                #expect(page.text.contains(fragment.trimmingCharacters(in: .whitespacesAndNewlines)))
            }
            #expect(first.contains { $0.contains("Buy milk") })
        }
    }

    @Test func aChangeToTheStoreSendsTheListWithTheNewRowEscaped() async throws {
        try await withTestDashboard { harness in
            let stream = try await events.events(harness.url + "/")
            _ = try await stream.next()
            _ = try await insert(harness, "<b>Milk</b> & eggs")
            let next = try await stream.next()
            let changed = try fragments(next)
            let list = try #require(changed.first { $0.contains(#"id="live-list""#) })
            #expect(list.contains("&lt;b&gt;Milk&lt;/b&gt; &amp; eggs") && !list.contains("<b>Milk"))
            #expect(changed.contains { $0.contains(#"<span data-field="pending">1</span>"#) })
            #expect(next?.id == String(harness.dashboard.context.storeRevision))
        }
    }

    @Test func aFragmentWhoseHTMLDidNotChangeIsNotSentAgain() async throws {
        try await withTestDashboard { harness in
            let stream = try await events.events(harness.url + "/?show=completed")
            _ = try await stream.next()
            // An active todo: the list of completed ones stays as it was; the header counts one more change.
            _ = try await insert(harness, "Not done yet")
            let changed = try fragments(try await stream.next())
            #expect(changed.count == 1)
            #expect(changed.first?.contains(#"id="live-header-counts""#) == true)
        }
    }

    @Test func theHeaderSaysHowTheDashboardFollowsWithoutAChangeToTheStore() async throws {
        try await withTestDashboard { harness in
            let stream = try await events.events(harness.url + "/")
            #expect(try fragments(try await stream.next()).allSatisfy { !$0.contains(#"data-field="followLabel""#) })
            harness.dashboard.autoSync?.setInterval(30)
            let header = try #require(try fragments(try await stream.next()).first)
            #expect(header.contains(#"id="live-header-counts""#))
            #expect(header.contains(">Live</span>") || header.contains(">Polling every 30 s</span>"))
        }
    }

    @Test func theEditorsFormKeepsThePagesToken() async throws {
        try await withTestDashboard { harness in
            let id = try await insert(harness, "Token")
            let stream = try await events.events(harness.url + "/items/\(id)")
            let form = try #require(
                try fragments(try await stream.next()).first { $0.contains(#"id="live-record-form""#) })
            #expect(form.contains(#"name="_csrf" value="\#(try await harness.csrfToken())""#))
        }
    }

    @Test func aRowsPageWhoseRowIsDeletedIsToldOnce() async throws {
        try await withTestDashboard { harness in
            let id = try await insert(harness, "Short-lived")
            let stream = try await events.events(harness.url + "/items/\(id)")
            _ = try await stream.next()
            try await harness.dashboard.context.table("todoitem").delete(id: id)
            let missing = try #require(try await stream.next())
            #expect(missing.event == "missing" && missing.data.contains("There is no todo"))
        }
    }

    @Test func theStreamEndsWhenThePageGoesAway() async throws {
        try await withTestDashboard(configure: { $0.heartbeatInterval = .milliseconds(50) }) { harness in
            let following = harness.dashboard.live.following
            let port = try #require(URL(string: harness.url)?.port)
            // A page that reads for a second, then goes away.
            let page = Task {
                try await RawHTTP.send(
                    port: port, "GET /operations HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
                    deadline: .seconds(1))
            }
            await following.wait(until: 1)
            #expect(try await page.value.contains("Content-Type: text/event-stream"))
            await following.wait(until: 0)
            #expect(following.count == 0)
        }
    }

    @Test func withoutAskingForEventsTheAddressAnswersThePageAsBefore() async throws {
        try await withTestDashboard { harness in
            let page = try await harness.client.send(.get, "/journal")
            #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(page.headers["vary"] == "Accept")
            #expect(page.text.contains(#"<div id="live-journal" data-live-fragment>"#))
        }
    }
}
