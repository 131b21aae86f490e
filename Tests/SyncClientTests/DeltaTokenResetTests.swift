import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// Listing and resetting the incremental pulls' tokens: a reset reads every row again and keeps
/// every queued change, conflict and journal entry; no row is duplicated or lost.
@Suite(.timeLimit(.minutes(10)))
struct DeltaTokenResetTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    @Test func eachTokenSaysWhereItStandsWhenItMovedAndWhatItBrought() async throws {
        try await service.rest.seed(30)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        #expect(try context.deltaTokens().isEmpty)
        _ = try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 10))
        _ = try await context.table("todoitem").pull(
            query: TableQuery(where: .equal("id", "row-000001")), queryId: "one")
        let tokens = try context.deltaTokens()
        #expect(tokens.map(\.queryId) == ["all", "one"])
        #expect(tokens.map(\.rows) == [30, 1])
        // The last row received: the service's newest by (updatedAt, id).
        let last = try #require(
            try await service.rest.all().max { a, b in
                (a["updatedAt"]!.stringValue!, a["id"]!.stringValue!) < (
                    b["updatedAt"]!.stringValue!, b["id"]!.stringValue!
                )
            })
        #expect(tokens[0].id == last["id"]?.stringValue && tokens[0].updatedAt == last["updatedAt"]?.stringValue)
        #expect(tokens.allSatisfy { $0.movedAt != nil })

        try await service.rest.insert(["id": "later", "text": "x"])
        _ = try await context.table("todoitem").pull(queryId: "all")
        #expect(try context.deltaTokens().first?.rows == 31, "counts add up across pulls")
    }

    @Test func aResetReadsEverythingAgainAndKeepsChangesConflictsAndTheJournal() async throws {
        try await service.rest.seed(20)
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint, policy: .ask)
        let todo = context.table("todoitem")
        _ = try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 7))
        // A journal entry, a conflict, a queued change.
        _ = try await service.rest.patch("row-000001", ["text": "theirs 1"])
        _ = try await service.rest.patch("row-000002", ["text": "theirs 2"])
        try await todo.update(["id": "row-000001", "text": "mine 1"])
        try await todo.update(["id": "row-000002", "text": "mine 2"])
        #expect(try await context.push().conflicts == [1, 2])
        try await context.conflicts.useServer(1)
        try await todo.update(["id": "row-000003", "text": "queued"])
        let queue = try queueShape(context)

        try await context.resetDeltaTokens(table: "todoitem", queryId: "all")
        #expect(try context.deltaTokens().isEmpty)
        // The pull pushes first: the queued change goes out; the conflict waits.
        let pulled = try await todo.pull(queryId: "all", settings: PullSettings(pageSize: 7))
        #expect(pulled.received == 20, "every row read again")
        #expect(try todo.count() == 20, "none duplicated or lost")
        #expect(queue == ["update row-000002 conflict", "update row-000003 pending"])
        #expect(try queueShape(context) == ["update row-000002 conflict"])
        #expect(try todo.item(id: "row-000002")?.text == "mine 2", "a conflicted row keeps its local values")
        #expect(try context.journal.entries().entries.count == 1)
        try await context.conflicts.useServer(2)
        _ = try await todo.pull(queryId: "all")
        #expect(try await context.verify("todoitem").differences.isEmpty)
    }

    @Test func aResetWaitsForARunningPullAndOnlyTouchesItsTable() async throws {
        try await service.rest.seed(5)
        try await service.rest.insert(["id": "t", "label": "x"], table: "tag")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        _ = try await context.table("tag").pull(queryId: "all")
        let pull = Task {
            try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 1))
        }
        try await context.resetDeltaTokens(table: "todoitem")
        _ = try await pull.value
        #expect(try context.deltaTokens().map(\.table).contains("tag"))
        await #expect(throws: SyncError.unknownTable("nope")) { try await context.resetDeltaTokens(table: "nope") }
    }
}
