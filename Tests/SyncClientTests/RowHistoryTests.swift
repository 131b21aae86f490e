import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// A row's history: every event that touched it, oldest first, and the sentence saying why it is as
/// it is now, against the real table service.
@Suite(.timeLimit(.minutes(10)))
struct RowHistoryTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    func context(policy: ConflictPolicy = .ask) throws -> SyncContext {
        try SyncContext.temporary(in: folder, remote: service.endpoint, policy: policy)
    }

    @Test func aPlainPushIsTheLocalInsertThenThePush() async throws {
        let context = try context()
        try await context.table("todoitem").insert(["id": "a", "text": "milk", "complete": false])
        let waiting = try context.table("todoitem").history(id: "a")
        #expect(waiting.explanation.hasPrefix("Your new row of "))
        #expect(waiting.explanation.hasSuffix("waits in the queue: the service has not seen it yet."))
        _ = try await context.push()

        let history = try context.table("todoitem").history(id: "a")
        #expect(history.events.map(\.kind) == [.localInsert, .pushed])
        #expect(history.events[0].values == ["text": "milk", "complete": false])
        let version = try #require(try await service.rest.get("todoitem", "a")?["version"]?.stringValue)
        #expect(history.events[1].version == version && history.events[1].detail == "insert")
        #expect(history.explanation.hasPrefix("Your new row is on the service: it applied it at "))
        #expect(history.explanation.hasSuffix("as version \(version)."))
        #expect(history.operation == nil && history.row?.text == "milk")
    }

    @Test func anEditThatJoinsAQueuedChangeSaysSo() async throws {
        let context = try context()
        try await context.table("todoitem").insert(["id": "a", "text": "milk"])
        try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
        let history = try context.table("todoitem").history(id: "a")
        #expect(history.events.map(\.kind) == [.localInsert, .localUpdate])
        #expect(history.events[1].values == ["text": "oat milk"], "only what changed")
        #expect(history.events[1].detail == "joined queued operation 1")
        #expect(history.events.allSatisfy { $0.operationId == 1 })
        #expect(history.explanation.hasPrefix("Your edit (text) of "))
    }

    @Test func aConflictSettledByTheMergePolicyIsExplainedByTheMerge() async throws {
        let context = try context(policy: .merge)
        try await service.rest.insert(["id": "a", "text": "milk", "complete": false])
        _ = try await context.table("todoitem").pull()
        _ = try await service.rest.patch("a", ["complete": true])
        try await context.table("todoitem").update(["id": "a", "text": "oat milk"])
        let result = try await context.push()
        #expect(result.conflicts.isEmpty)

        let history = try context.table("todoitem").history(id: "a")
        #expect(history.events.map(\.kind) == [.pulled, .localUpdate, .conflict, .pushed, .decided])
        #expect(history.events[2].status == 412)
        let entry = try #require(history.events[4].journalEntry)
        #expect(entry.decision == .merge && entry.decidedBy == .merge)
        let version = try #require(try await service.rest.get("todoitem", "a")?["version"]?.stringValue)
        #expect(history.explanation.hasPrefix("Merged by the merge policy at "))
        #expect(history.explanation.hasSuffix("merged and the service holds them as version \(version)."))
    }

    @Test func useClientIsExplainedByThePersonsDecision() async throws {
        let context = try context()
        try await service.changeOnBothSides(1, pulledBy: context)
        _ = try await context.push()
        let waiting = try context.table("todoitem").history(id: "i0")
        #expect(waiting.explanation.contains("met a newer copy on the service"))
        #expect(waiting.explanation.contains("(HTTP 412)") && waiting.explanation.contains("conflict page"))

        #expect(try await context.conflicts.useClient(1) == .pushed)
        let history = try context.table("todoitem").history(id: "i0")
        #expect(history.events.map(\.kind) == [.pulled, .localUpdate, .conflict, .pushed, .decided])
        #expect(history.events[4].journalEntry?.decision == .useClient)
        #expect(history.explanation.hasPrefix("Use Client by a person at "))
        #expect(history.explanation.contains("your values went to the service as version"))
    }

    @Test func anOverturnShowsTheFirstDecisionAndTheOneThatReplacedIt() async throws {
        let context = try context()
        try await service.changeOnBothSides(1, pulledBy: context)
        _ = try await context.push()
        try await context.conflicts.useServer(1)
        let first = try #require(try context.journal.entries().entries.first)
        #expect(try await context.journal.overturn(first.id) == .pushed)

        let history = try context.table("todoitem").history(id: "i0")
        #expect(
            history.events.map(\.kind) == [
                .pulled, .localUpdate, .conflict, .decided, .localUpdate, .pushed, .decided,
            ])
        #expect(history.events[3].journalEntry?.decision == .useServer)
        #expect(history.events[4].detail?.hasPrefix("overturning the journal's Use Server of ") == true)
        #expect(history.events[6].journalEntry?.decision == .overturn)
        #expect(history.explanation.hasPrefix("Overturned by a person at "))
        #expect(history.explanation.contains("the service holds the values that had lost"))
    }

    @Test func aRowBroughtByAPullNamesItsPageAndTokens() async throws {
        let context = try context()
        try await service.rest.seed(3)
        _ = try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 2))
        // In the pull's order: the last row comes on page 2, after the first two.
        let rows = try await service.rest.all().map { row in
            (updatedAt: row["updatedAt"]?.stringValue ?? "", id: row["id"]?.stringValue ?? "", row: row)
        }.sorted { ($0.updatedAt, $0.id) < ($1.updatedAt, $1.id) }
        let (second, last) = (rows[1], rows[2])

        let history = try context.table("todoitem").history(id: last.id)
        #expect(history.events.map(\.kind) == [.pulled])
        let version = try #require(last.row["version"]?.stringValue)
        #expect(history.events[0].version == version)
        #expect(
            history.events[0].pullPage
                == HistoryEvent.PullPage(
                    queryId: "all", page: 2, tokenBefore: "\(second.updatedAt) \(second.id)",
                    tokenAfter: "\(last.updatedAt) \(last.id)"))
        #expect(history.explanation.hasPrefix("The service's copy (version \(version)), brought by page 2 of a pull"))
        #expect(history.explanation.contains("(query id all) at "))
        #expect(try context.table("todoitem").history(id: rows[0].id).events[0].pullPage?.tokenBefore == nil)
    }

    @Test func aPullThatFindsAQueuedChangeLeavesTheRowAndSaysSo() async throws {
        let context = try context()
        try await service.changeOnBothSides(1, pulledBy: context)
        _ = try await context.push()
        // The conflict is not sent again by the pull: the page finds the change queued.
        _ = try await context.table("todoitem").pull()

        let history = try context.table("todoitem").history(id: "i0")
        #expect(history.events.map(\.kind) == [.pulled, .localUpdate, .conflict, .pullSkipped])
        let server = try #require(try await service.rest.get("todoitem", "i0")?["version"]?.stringValue)
        #expect(history.events[3].version == server)
        #expect(history.row?.text == "client 0")
        #expect(history.explanation.contains("waits for your decision on the conflict page"))
    }

    @Test func aRowTheServiceDeletedIsExplainedByThePullThatRemovedIt() async throws {
        let context = try context()
        try await service.rest.insert(["id": "a", "text": "milk"])
        _ = try await context.table("todoitem").pull(queryId: "all")
        try await service.rest.delete("a")
        _ = try await context.table("todoitem").pull(queryId: "all")

        let history = try context.table("todoitem").history(id: "a")
        #expect(history.events.map(\.kind) == [.pulled, .pulledDelete])
        #expect(history.row == nil)
        #expect(history.explanation.hasPrefix("The service deleted it: page 1 of a pull (query id all) at "))
    }

    @Test func aPurgeAndATokenResetAreTableWideEvents() async throws {
        let context = try context()
        try await service.rest.insert(["id": "a", "text": "milk"])
        _ = try await context.table("todoitem").pull(queryId: "all")
        try await context.resetDeltaTokens(table: "todoitem")
        #expect(try await context.table("todoitem").purge() == 1)

        let history = try context.table("todoitem").history(id: "a")
        #expect(history.events.map(\.kind) == [.pulled, .tokenReset, .purged])
        #expect(history.events[1].detail == "every query id")
        #expect(history.events[2].detail == "1 local rows removed")
        #expect(history.explanation.hasPrefix("Removed from this device by a purge at "))
        // A row the table never held sees none of them.
        #expect(try context.table("todoitem").history(id: "never").events.isEmpty)
    }

    @Test func discardAndCancelAreRecorded() async throws {
        let context = try context()
        try await service.changeOnBothSides(2, pulledBy: context)
        _ = try await context.push()
        try await context.queue.cancel(1)
        try await context.queue.discard(2)
        let cancelled = try context.table("todoitem").history(id: "i0")
        #expect(cancelled.events.last?.kind == .cancelled)
        #expect(cancelled.explanation.hasPrefix("The conflict or refusal was set aside at "))
        let discarded = try context.table("todoitem").history(id: "i1")
        #expect(discarded.events.last?.kind == .discarded)
        #expect(discarded.explanation.hasPrefix("Your change was discarded at "))
    }

    @Test func retentionKeepsTheNewestEventsAndTheSentenceSaysWhenNoneIsLeft() async throws {
        let context = try context()
        #expect(try context.retention(of: .history) == 20_000)
        try await service.rest.insert(["id": "pulled", "text": "from the service"])
        _ = try await context.table("todoitem").pull()
        try await context.setRetention(of: .history, to: 2)
        try await context.table("todoitem").insert(["id": "b", "text": "second"])
        try await context.table("todoitem").insert(["id": "c", "text": "third"])
        #expect(try context.table("todoitem").history(id: "b").events.map(\.kind) == [.localInsert])

        let pulled = try context.table("todoitem").history(id: "pulled")
        #expect(pulled.events.isEmpty)
        #expect(
            pulled.explanation
                == "No kept event explains this row: it came before its history began (the store keeps the newest 2 events)."
        )
    }

    @Test func pulledRowsFindTheirIdExactly() {
        var rows = PulledRows()
        rows.append(id: "ab", version: "v1", kind: .pulled)
        rows.append(id: "a", version: "v2", kind: .pulledDelete)
        rows.append(id: "tab\there", version: nil, kind: .pullSkipped)
        rows.append(id: "line\nbreak\\", version: "v\t3", kind: .pulled)
        #expect(PulledRows.entry(of: "a", in: rows.text)?.kind == .pulledDelete)
        #expect(PulledRows.entry(of: "a", in: rows.text)?.version == "v2")
        #expect(PulledRows.entry(of: "ab", in: rows.text)?.version == "v1")
        #expect(PulledRows.entry(of: "b", in: rows.text) == nil)
        #expect(PulledRows.entry(of: "tab\there", in: rows.text)?.kind == .pullSkipped)
        #expect(PulledRows.entry(of: "tab\there", in: rows.text)?.version == nil)
        #expect(PulledRows.entry(of: "line\nbreak\\", in: rows.text)?.version == "v\t3")
        #expect(PulledRows.entry(of: "tab", in: rows.text) == nil)
    }
}
