import Testing

@testable import SyncClient

/// The pull's state machine, page by page, without a network.
struct PullCursorTests {
    private func rows(_ pairs: [(String, String)]) -> [PullCursor.RowKey] {
        pairs.map { PullCursor.RowKey(id: $0.0, updatedAt: $0.1) }
    }

    private let t1 = "2026-01-01T00:00:01.000Z"
    private let t2 = "2026-01-01T00:00:02.000Z"
    private let t3 = "2026-01-01T00:00:03.000Z"

    @Test func emptyPageEndsThePull() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken())
        #expect(try cursor.advance(over: []) == false)
    }

    @Test func rowsPastTheCursorMoveItToTheLastOne() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken())
        #expect(try cursor.advance(over: rows([("a", t1), ("b", t2)])))
        #expect(cursor.token == DeltaToken(updatedAt: t2, id: "b", skip: nil))
        #expect(try cursor.advance(over: rows([("c", t2), ("a", t3)])))
        #expect(cursor.token == DeltaToken(updatedAt: t3, id: "a", skip: nil))
    }

    @Test func rowBeforeTheCursorMeansTheFilterWasIgnored() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken(updatedAt: t2, id: "b", skip: nil))
        #expect(throws: ServiceFault.ignoredFilter(table: "todoitem", rowId: "a")) {
            try cursor.advance(over: rows([("a", t1), ("c", t3)]))
        }
    }

    @Test func updatedAtGoingBackwardsInAPageIsNamed() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken())
        #expect(throws: ServiceFault.updatedAtWentBackwards(table: "todoitem", from: t3, to: t1)) {
            try cursor.advance(over: rows([("a", t2), ("b", t3), ("c", t1)]))
        }
    }

    @Test func noProgressFallsBackToSkipAndTheSamePageAgainIsARepeat() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken())
        let page = rows([("a", t1), ("b", t1)])
        #expect(try cursor.advance(over: page))
        // Sent again although the cursor asked for rows after (t1, b): the keyset is ignored.
        #expect(try cursor.advance(over: page))
        #expect(cursor.token == DeltaToken(updatedAt: t1, id: nil, skip: 0))
        #expect(try cursor.advance(over: page))
        #expect(cursor.token == DeltaToken(updatedAt: t1, id: nil, skip: 2))
        #expect(throws: ServiceFault.repeatedPages(table: "todoitem")) { try cursor.advance(over: page) }
    }

    @Test func freshIdsAtTheCursorsInstantAreInventedRows() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken())
        #expect(try cursor.advance(over: rows([("m", t1), ("q", t1)])))
        #expect(throws: ServiceFault.ignoredFilter(table: "todoitem", rowId: "f")) {
            try cursor.advance(over: rows([("f", t1), ("z", t1)]))
        }
    }

    @Test func resumedPullDoesNotJudgeRowsAtTheInstantItStartsFrom() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken(updatedAt: t1, id: "q", skip: nil))
        // A service that ignores the keyset sends rows at t1 seen by an earlier pull.
        #expect(try cursor.advance(over: rows([("f", t1), ("m", t1), ("z", t2)])))
        #expect(cursor.token == DeltaToken(updatedAt: t2, id: "z", skip: nil))
    }

    @Test func rowsSharingAnInstantPageWithSkipWhenTheKeysetIsIgnored() throws {
        var cursor = PullCursor(table: "todoitem", token: DeltaToken())
        #expect(try cursor.advance(over: rows([("a", t1), ("b", t1)])))
        #expect(try cursor.advance(over: rows([("a", t1), ("b", t1)])))
        #expect(try cursor.advance(over: rows([("a", t1), ("b", t1)])))
        #expect(try cursor.advance(over: rows([("c", t1), ("d", t2)])))
        #expect(cursor.token == DeltaToken(updatedAt: t2, id: nil, skip: 1))
    }
}
