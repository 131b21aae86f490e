import Foundation
import GRDB
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// `verify` compares the local table with the service and says why each row differs; a row that
/// differs for no reason is a silent divergence, listed first.
@Suite(.timeLimit(.minutes(10)))
struct VerifyTests {
    let folder: TemporaryFolder
    let service: TestService

    init() async throws {
        folder = try TemporaryFolder()
        service = try await TestService.forSync(in: folder)
    }

    /// A store holding the service's 25 rows (and knowing one the service deleted), pulled with a token.
    func synced() async throws -> SyncContext {
        try await service.rest.seed(26)
        try await service.rest.delete("row-000025")
        let context = try SyncContext.temporary(in: folder, remote: service.endpoint)
        _ = try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 10))
        return context
    }

    /// Changes the store's file behind the client's back, as a bug would.
    func changeByHand(_ context: SyncContext, _ sql: String) throws {
        let database = try sideConnection(context.path)
        defer { try? database.close() }
        try database.write { db in try db.execute(sql: sql) }
    }

    @Test func aCleanSyncVerifiesWithNoDifference() async throws {
        let context = try await synced()
        let report = try await context.verify("todoitem", pageSize: 10)
        #expect(report.differences.isEmpty)
        #expect(report.localRows == 25 && report.serviceRows == 26, "the service's deleted row is read too")
        #expect(report.summary.hasSuffix("they match."))
    }

    @Test func rowsChangedByHandInTheLocalFileAreSilentDivergences() async throws {
        let context = try await synced()
        try changeByHand(context, "UPDATE todoitem SET version = 'forged' WHERE id = 'row-000003'")
        try changeByHand(context, "DELETE FROM todoitem WHERE id = 'row-000007'")
        try changeByHand(context, "INSERT INTO todoitem (id, text, version) VALUES ('ghost', 'boo', 'v1')")
        // A queued change: a difference with a reason, listed after the silent ones.
        try await context.table("todoitem").insert(["id": "new", "text": "not pushed yet"])

        let report = try await context.verify("todoitem", pageSize: 10)
        #expect(report.differences.map(\.id) == ["ghost", "row-000003", "row-000007", "new"])
        #expect(
            report.differences.map(\.kind) == [
                .missingOnService, .differentVersion, .missingLocally, .missingOnService,
            ])
        #expect(report.differences.map(\.reason) == [.none, .none, .none, .pendingChange])
        #expect(report.silentDivergences.count == 3)
        #expect(report.differences[1].localVersion == "forged" && report.differences[1].serviceVersion != "forged")
        #expect(report.summary.contains("3 with no reason"))
    }

    /// The same version with other values: changed by hand on either side (or brought back by a
    /// restore). Verify names the columns; a sync that wrote the values itself finds none.
    @Test func valuesChangedByHandUnderTheSameVersionAreFoundAndNamed() async throws {
        _ = try await service.rest.insert([
            "id": "typed", "text": "many kinds", "complete": true, "count": 3, "ratio": 0.25,
            "due": "2026-03-04T05:06:07.008Z", "note": .null,
        ])
        let context = try await synced()
        #expect(try await context.verify("todoitem", pageSize: 10).differences.isEmpty)

        try changeByHand(context, "UPDATE todoitem SET text = 'changed here' WHERE id = 'row-000003'")
        try withServiceDatabase(service) { db in
            try db.execute(sql: "UPDATE todoitem SET text = 'changed there', complete = 1 WHERE id = 'row-000008'")
        }
        let report = try await context.verify("todoitem", pageSize: 10)
        #expect(report.differences.map(\.id) == ["row-000003", "row-000008"])
        #expect(report.differences.allSatisfy { $0.kind == .differentValues && $0.reason == .none })
        #expect(report.differences.map(\.columns) == [["text"], ["complete", "text"]])
    }

    @Test func eachDifferenceWithACauseSaysWhich() async throws {
        let context = try await synced()
        try await context.table("todoitem").update(["id": "row-000001", "text": "edited here"])
        try await context.table("todoitem").update(["id": "row-000006", "text": "queued"])
        _ = try await service.rest.patch("row-000002", ["text": "edited there"])
        _ = try await service.rest.patch("row-000004", ["text": "theirs"])
        try await context.table("todoitem").update(["id": "row-000004", "text": "mine"])
        try await service.rest.delete("row-000005")
        #expect(try await context.push().conflicts.count == 1)
        try await context.table("todoitem").update(["id": "row-000006", "text": "queued again"])
        _ = try await service.rest.patch("row-000006", ["text": "and changed there"])

        let report = try await context.verify("todoitem", pageSize: 10)
        let reasons = Dictionary(uniqueKeysWithValues: report.differences.map { ($0.id, $0.reason) })
        // row-000001's push wrote the service's new version back: the same on both sides.
        #expect(
            reasons == [
                "row-000002": .notPulledYet, "row-000004": .conflict, "row-000005": .notPulledYet,
                "row-000006": .pendingChange,
            ])
        #expect(report.differences.first { $0.id == "row-000005" }?.kind == .deletedOnService)
        _ = try await context.conflicts.useServer(try #require(try context.conflicts.all().first).id)
        _ = try await context.table("todoitem").pull(queryId: "all")
        #expect(try context.conflicts.all().count == 1, "row-000006's pushed edit met the change there")
        _ = try await context.conflicts.useServer(try #require(try context.conflicts.all().first).id)
        #expect(try await context.verify("todoitem").differences.isEmpty, "a sync settles every difference")
    }

    @Test func verifyChangesNothingLocal() async throws {
        let context = try await synced()
        try changeByHand(context, "UPDATE todoitem SET text = 'x', version = 'forged' WHERE id = 'row-000003'")
        let before = try context.table("todoitem").query()
        let store = context.store
        let tokens = try context.read { db in try store.deltaTokens(db, table: "todoitem") }
        _ = try await context.verify("todoitem", pageSize: 7)
        #expect(try context.table("todoitem").query() == before)
        let tokensAfter = try context.read { db in try store.deltaTokens(db, table: "todoitem") }
        #expect(tokensAfter == tokens)
        #expect(try context.operations.all().isEmpty)
    }

    @Test func aServiceThatIgnoresTheFilterEndsWithATypedError() async throws {
        let page = #"[{"id":"a","version":"1","updatedAt":"2026-01-01T00:00:00.000Z","deleted":false}]"#
        let liar = try await MisbehavingService { _ in .json(200, page) }
        let context = try SyncContext.temporary(in: folder, remote: liar.url)
        await #expect(throws: SyncError.serviceFault(.repeatedPages(table: "todoitem"))) {
            try await context.verify("todoitem")
        }
        #expect(liar.requests.count == 2)
        await liar.stop()
    }

    @Test func aVerifyStopsWhenCancelled() async throws {
        try await service.rest.seed(30)
        let proxy = try await service.proxy()
        let secondPage = proxy.holdAnswers(after: 1)
        let context = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        let verify = Task { try await context.verify("todoitem", pageSize: 10) }
        await secondPage.wait()
        // The second page is asked for while the first is compared: its comparison ends all the same.
        for await progress in context.progressUpdates() where progress.done >= 10 { break }
        #expect(context.progress.activity == .verifying && context.progress.done == 10)
        #expect(context.jobs.cancel())
        await #expect(throws: SyncError.stopped(.cancelled)) { try await verify.value }
        #expect(context.progress.activity == .idle)
    }
}

/// The comparison of one row, case by case, with no store or service.
@Suite struct RowComparisonTests {
    typealias Copy = RowComparison.Copy
    let copy = Copy(version: "v1", updatedAt: "2026-01-01T00:00:01.000Z")
    let newer = Copy(version: "v2", updatedAt: "2026-01-01T00:00:05.000Z")
    let token = DeltaToken(updatedAt: "2026-01-01T00:00:02.000Z", id: "m")

    func compare(
        _ local: Copy?, _ service: Copy?, queued: OperationState? = nil, token: DeltaToken? = nil
    )
        -> RowDifference?
    {
        RowComparison.difference(
            id: "a", local: local, service: service, queued: queued, pulledUpTo: token, table: .todoItem)
    }

    @Test func equalCopiesAndRowsDeletedOnBothSidesAreNoDifference() {
        #expect(compare(copy, copy) == nil)
        #expect(compare(copy, Copy(version: "v1", updatedAt: "2026-01-01T00:00:01Z")) == nil, "same instant")
        #expect(compare(nil, Copy(version: "v1", updatedAt: nil, deleted: true)) == nil)
        #expect(compare(nil, nil) == nil)
    }

    @Test func kindsOfDifference() {
        #expect(compare(nil, copy)?.kind == .missingLocally)
        #expect(compare(copy, nil)?.kind == .missingOnService)
        #expect(compare(copy, Copy(version: "v2", updatedAt: copy.updatedAt, deleted: true))?.kind == .deletedOnService)
        #expect(compare(copy, newer)?.kind == .differentVersion)
    }

    @Test func reasonsInOrderOfPrecedence() {
        #expect(compare(copy, newer, queued: .conflict, token: token)?.reason == .conflict)
        #expect(compare(copy, newer, queued: .pending, token: token)?.reason == .pendingChange)
        #expect(compare(copy, newer, token: token)?.reason == .notPulledYet, "changed after the token")
        #expect(compare(copy, newer)?.reason == .notPulledYet, "never pulled incrementally")
        #expect(compare(newer, copy, token: token)?.reason == RowDifference.Reason.none, "the token is past it")
        #expect(compare(copy, nil, token: token)?.reason == RowDifference.Reason.none)
    }

    /// Copies of the same version compare their values as the local table holds them: the service's
    /// decoded as a pull decodes its page, the local one as read from its row.
    @Test func valuesOfTheSameVersionAreComparedColumnByColumn() throws {
        let table = TableDescription(
            name: "todoitem", columns: [.init("text", .text), .init("complete", .boolean), .init("due", .date)])
        let system = #""id":"a","version":"v1","updatedAt":"2026-01-01T00:00:01.000Z""#
        func service(_ members: String) throws -> Copy {
            Copy(pulled: try #require(try PageLayout(table).decode(Data("[{\(system),\(members)}]".utf8)).rows.first))
        }
        func local(_ members: String) throws -> Copy {
            Copy(stored: try service(members).values ?? [])
        }
        func columns(_ mine: Copy, _ theirs: Copy) -> [String]? {
            guard
                let difference = RowComparison.difference(
                    id: "a", local: mine, service: theirs, queued: nil, pulledUpTo: nil, table: table)
            else { return nil }
            #expect(difference.kind == .differentValues)
            return difference.columns
        }
        let due = #""due":"2026-03-04T05:06:07.008Z""#
        let stored = try local(#""text":"x","complete":true,"# + due)
        let same = try service(#""text":"x","complete":true,"# + due)
        let changed = try service(#""text":"y","complete":false,"# + due)
        // Another text of the same instant is kept aside (not the column's form) yet is the same date.
        let sameInstant = try service(#""text":"x","complete":true,"due":"2026-03-04T05:06:07.008+00:00""#)
        let later = try service(#""text":"x","complete":true,"due":"2026-03-04T05:06:08Z""#)
        // A member the table has no column for, and a missing member against null.
        let tagged = try service(#""text":"x","complete":true,"tag":"new","# + due)
        let (withNull, without) = (try local(#""text":"x","due":null"#), try service(#""text":"x""#))
        #expect(columns(stored, same) == nil)
        #expect(columns(stored, changed) == ["complete", "text"])
        #expect(columns(stored, sameInstant) == nil)
        #expect(columns(stored, later) == ["due"])
        #expect(columns(stored, tagged) == ["tag"])
        #expect(columns(withNull, without) == nil)
        #expect(columns(Copy(version: "v1", updatedAt: "2026-01-01T00:00:01.000Z"), without) == nil, "values not read")
    }

    @Test func theFurthestTokenIsTheOneWithTheLatestCursor() {
        let tokens = [
            DeltaToken(updatedAt: "2026-01-01T00:00:02.000Z", id: "b"), DeltaToken(),
            DeltaToken(updatedAt: "2026-01-01T00:00:02.000Z", id: "c"),
            DeltaToken(updatedAt: "2026-01-01T00:00:01.000Z", id: "z"),
        ]
        #expect(RowComparison.furthest(tokens) == DeltaToken(updatedAt: "2026-01-01T00:00:02.000Z", id: "c"))
        #expect(RowComparison.furthest([DeltaToken()]) == nil)
    }
}
