import FaultProxy
import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable import Dashboard
@testable import SyncClient

/// What a new user met first: quick complete, delete confirmation, refused changes, header truth.
@Suite(.timeLimit(.minutes(10))) struct RoughEdgeTests {
    @Test func quickCompleteWorksAsAFormAndAsAScriptCall() async throws {
        try await withTestDashboard { harness in
            let table = harness.dashboard.context.table("todoitem")
            let id = try await table.insert(["text": "water the plants", "complete": false])["id"]?.stringValue ?? ""
            let list = try await harness.client.send(.get, "/?show=active")
            #expect(list.text.contains(#"action="/items/\#(id)/set""#))
            #expect(list.text.contains(#"aria-checked="false""#))
            let token = try await harness.csrfToken()
            // A form post (what the page's script sends too), back to the same list at the same row.
            let form = try await harness.client.send(
                .post, "/items/\(id)/set", form: ["_csrf": token, "column": "complete", "value": "true"],
                headers: [.referer: harness.client.base + "/?show=active"])
            #expect(form.status == 303)
            #expect(form.headers["location"] == "/?show=active#row-\(id)")
            #expect(try table.item(id: id)?["complete"] == .bool(true))
            // A script call: the one item API, then the row's sync state.
            let script = try await harness.client.send(
                .patch, "/api/data/todoitem/\(id)", json: Data(#"{"complete": false}"#.utf8),
                headers: [CSRFProtection.headerName: token])
            #expect(script.status == 200)
            let row = try JSONSerialization.jsonObject(with: script.body) as? [String: Any]
            #expect(row?["complete"] as? Bool == false)
            let rows =
                try JSONSerialization.jsonObject(
                    with: try await harness.client.send(.get, "/api/data/todoitem").body) as? [String: Any]
            #expect((rows?["syncStates"] as? [String: String])?[id] == "pending insert")
            #expect(try table.item(id: id)?["complete"] == .bool(false))
            let bad = try await harness.client.send(
                .post, "/items/\(id)/set", form: ["_csrf": token, "column": "complete", "value": "maybe"])
            #expect(bad.status == 400)
        }
    }

    @Test func aRefusedChangeIsCountedReadableAndRetriedOnceTheServiceIsFixed() async throws {
        try await withTestDashboard { harness in
            // A gateway in front of the service that refuses every change with an HTML error page, as a
            // misconfigured proxy does, until it is fixed.
            let context = harness.dashboard.context
            let service = try #require(context.remoteURL)
            let misconfigured = Flag(true)
            let page = """
                <!DOCTYPE html><html><head><title>400</title><style>body { color: red }</style></head>
                <body><h1>400 Bad Request</h1><p>The gateway refused the &quot;todoitem&quot; change.</p></body></html>
                """
            let gateway = try await FaultProxy(upstream: service)
            gateway.intercept { request, _ in
                guard request.method == "POST", misconfigured.isOn else { return nil }
                return .answer(
                    ProxiedResponse(
                        status: 400, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(page.utf8)))
            }
            try await context.setRemote(url: gateway.endpoint, applicationKey: nil)
            _ = try await context.table("todoitem").insert(["text": "refused at first", "complete": false])
            _ = try await harness.submit("/push", [:])
            await harness.dashboard.waitUntilIdle()

            let queue = try await harness.client.send(.get, "/operations")
            #expect(queue.text.contains(#"<span data-field="refused">1</span> refused"#))
            #expect(queue.text.contains("400 Bad Request The gateway refused the &quot;todoitem&quot; change."))
            #expect(!queue.text.contains("&lt;h1&gt;"))
            #expect(!queue.text.contains("color: red"))
            #expect(queue.text.contains(">Retry now</button>"))
            let id = try #require(try context.operations.all().first?.id)

            // The gateway is fixed: Retry sends the change again.
            misconfigured.isOn = false
            let retried = try await harness.submit("/operations/\(id)/retry", [:])
            #expect(retried.status == 303)
            await harness.dashboard.waitUntilIdle()
            #expect(try context.operations.all().isEmpty)
            let after = try await harness.client.send(.get, "/operations")
            #expect(after.text.contains(#"<span data-field="refused">0</span> refused"#))
            #expect(after.text.contains("Nothing to push"))
            // Retry waits for a held change to be released.
            _ = try await context.table("todoitem").insert(["text": "waiting", "complete": false])
            let pendingId = try #require(try context.operations.all().first?.id)
            try await context.operations.hold(pendingId)
            #expect(try await harness.submit("/operations/\(pendingId)/retry", [:]).status == 409)
            await gateway.stop()
        }
    }

    @Test func theHeaderSaysWhatIsKnownAboutTheRemote() async throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(RemoteState.decide(offline: false, remote: "http://a", running: false, contact: nil) == .notContacted)
        #expect(RemoteState.decide(offline: false, remote: "http://a", running: true, contact: nil) == .syncing)
        #expect(RemoteState.decide(offline: true, remote: "http://a", running: true, contact: nil) == .offline)
        #expect(RemoteState.decide(offline: false, remote: "", running: false, contact: nil) == .noRemote)
        var contact = RemoteState.record(
            .init(
                kind: .pull, finishedAt: now, pushed: 0, conflicts: 0, failed: 0, pulled: 3, stopReason: nil, error: nil
            ),
            after: nil)
        #expect(
            RemoteState.decide(offline: false, remote: "http://a", running: false, contact: contact)
                == .reachable(lastContact: now))
        let later = now.addingTimeInterval(60)
        contact = RemoteState.record(
            .init(
                kind: .push, finishedAt: later, pushed: 0, conflicts: 0, failed: 0, pulled: 0,
                stopReason: .unreachable("refused"), error: nil), after: contact)
        contact = RemoteState.record(
            .init(
                kind: .push, finishedAt: later.addingTimeInterval(60), pushed: 0, conflicts: 0, failed: 0, pulled: 0,
                stopReason: .timedOut, error: nil), after: contact)
        #expect(
            RemoteState.decide(offline: false, remote: "http://a", running: false, contact: contact)
                == .unreachable(since: later))
        #expect(RemoteState.unreachable(since: later).label.hasPrefix("Unreachable since "))
        let revocation = AccessRevocation(kind: .device, subject: "phone", wipe: true, revokedAt: 0)
        contact = RemoteState.record(
            .init(
                kind: .pull, finishedAt: later, pushed: 0, conflicts: 0, failed: 0, pulled: 0,
                stopReason: .accessRevoked(revocation), error: nil), after: contact)
        #expect(RemoteState.decide(offline: false, remote: "http://a", running: false, contact: contact) == .revoked)
        #expect(RemoteState.revoked.label == "Access revoked by the service's admin")
    }
}

@Suite(.timeLimit(.minutes(10))) struct QueuePagingTests {
    @Test func theQueuePageShowsAtMostAHundredChangesWithLinksToTheRest() async throws {
        try await withTestDashboard { harness in
            let todos = harness.dashboard.context.table("todoitem")
            for index in 0..<150 {
                try await todos.insert(["text": .string("queued \(index)"), "complete": .bool(false)])
            }
            let first = try await harness.client.send(.get, "/operations")
            #expect(first.text.components(separatedBy: "/discard\"").count - 1 == 100)
            #expect(first.text.contains("100 shown of 150 queued changes"))
            let ids = try harness.dashboard.context.operations.all().map(\.id)
            #expect(first.text.contains("href=\"/operations?after=\(ids[99])\""))
            let second = try await harness.client.send(.get, "/operations?after=\(ids[99])")
            #expect(second.text.components(separatedBy: "/discard\"").count - 1 == 50)
            #expect(second.text.contains("href=\"/operations?before=\(ids[100])\""))
            #expect(try await harness.client.send(.get, "/operations?after=x").status == 400)
        }
    }
}

/// A switch a test flips while a server's handlers read it.
final class Flag: Sendable {
    private let value: Mutex<Bool>
    init(_ on: Bool) { value = Mutex(on) }
    var isOn: Bool {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
