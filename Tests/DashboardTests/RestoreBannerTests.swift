import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard
@testable import SyncClient

/// After the service went back in time, the dashboard says so on every page until the rows it
/// lost or holds older values of are decided, and the conflict page explains each one.
@Suite(.timeLimit(.minutes(10))) struct RestoreBannerTests {
    @Test func aBannerLinksToTheConflictsUntilEachIsDecided() async throws {
        let folder = try TemporaryFolder()
        var service = try await TestService.sqlite(in: folder)
        let harness = try await TestDashboard(remote: .url(service.endpoint, applicationKey: nil)) { configuration in
            configuration.autoSyncInterval = 3600
            configuration.live = .off
        }
        let context = harness.dashboard.context
        _ = try await context.table("todoitem").insert(["id": "kept", "text": "before the copy"])
        _ = try await context.run(.sync(queryId: "all", pageSize: 50))
        let (running, moment) = try await service.copyingDatabase(to: folder.file("copy.sqlite"))
        _ = try await context.table("todoitem").insert(["id": "lost", "text": "after the <copy>"])
        _ = try await context.run(.sync(queryId: "all", pageSize: 50))
        service = try await running.restored(from: folder.file("copy.sqlite"), to: moment)
        _ = try await context.run(.sync(queryId: "all", pageSize: 50))

        let page = try await harness.client.send(.get, "/")
        #expect(page.text.contains("The service went back to"))
        #expect(page.text.contains("1 of your rows is not on it"))
        #expect(page.text.contains(#"<a href="/conflicts">Decide them on the conflicts page</a>"#))
        let conflict = try #require(try context.conflicts.all().first)
        let detail = try await harness.client.send(.get, "/conflicts/\(conflict.id)")
        #expect(detail.text.contains("no longer has it"))
        #expect(detail.text.contains("after the &lt;copy&gt;"))

        let decided = try await harness.submit("/conflicts/\(conflict.id)/resolve", ["choice": "use-client"])
        #expect(decided.status == 303)
        let after = try await harness.client.send(.get, "/")
        #expect(!after.text.contains("The service went back to"))
        #expect(try await service.rest.get("todoitem", "lost")?["text"] == "after the <copy>")
        await harness.stop()
        await service.stop()
    }

    @Test func theBannerCountsGoneAndOlderRows() {
        let notice = RestoreNotice(
            epoch: ServiceEpoch(id: "e", restoredTo: 1_796_600_000_000), reconciledAt: Date(), gone: 3, older: 2,
            taken: 0)
        #expect(
            HeaderView.restoreMessage(notice, gone: 3, older: 1)
                == "The service went back to 2026-12-06 23:33:20 UTC: 3 of your rows are not on it, and 1 row holds "
                + "older values there.")
        #expect(HeaderView.restoreMessage(notice, gone: 0, older: 0) == nil)
        #expect(HeaderView.restoreMessage(nil, gone: 2, older: 0) == nil)
    }
}
