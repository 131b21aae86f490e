import Testing

@testable import SyncClient

// The pull run's transitions, one event at a time, with no store and no sockets.

private let t1 = "2026-01-01T00:00:01.000Z"
private let t2 = "2026-01-01T00:00:02.000Z"
private let t3 = "2026-01-01T00:00:03.000Z"

private func keys(_ pairs: (String, String)...) -> [PullCursor.RowKey] {
    pairs.map { PullCursor.RowKey(id: $0.0, updatedAt: $0.1) }
}

private func token(_ updatedAt: String, _ id: String) -> DeltaToken {
    DeltaToken(updatedAt: updatedAt, id: id, skip: nil)
}

private func counts(_ written: Int) -> PageCounts { PageCounts(written: written) }

private let lost = SyncError.stopped(.connectionLost("reset"))
private let full = SyncError.badResponse("disk full")

private func newRun() -> PullRun { PullRun(cursor: PullCursor(table: "todoitem", token: DeltaToken())) }

struct PullRunTests {
    @Test func theFirstPageAsksHowManyRowsWillCome() {
        var run = newRun()
        #expect(run.start() == [.fetch(page: 1, token: DeltaToken(), counting: true)])
        _ = run.fetched(1, rows: keys(("a", t1)), total: 120)
        #expect(run.total == 120)
    }

    @Test func pageNIsWrittenWhilePageNPlusOneIsFetched() {
        var run = newRun()
        _ = run.start()
        #expect(
            run.fetched(1, rows: keys(("a", t1), ("b", t2)), total: 3) == [
                .write(page: 1, token: token(t2, "b")), .fetch(page: 2, token: token(t2, "b"), counting: false),
            ])
        #expect(run.written(1, counts(2)).isEmpty, "page 2 is on the wire")
        #expect(
            run.fetched(2, rows: keys(("c", t3)), total: nil) == [
                .write(page: 2, token: token(t3, "c")), .fetch(page: 3, token: token(t3, "c"), counting: false),
            ])
        #expect(run.fetched(3, rows: [], total: nil).isEmpty, "page 2 is still being written")
        #expect(run.written(2, counts(1)) == [.finish(error: nil)])
        #expect(run.result.received == 3 && run.result.written == 3 && run.result.pages == 3)
    }

    @Test func aPageThatArrivesDuringTheWriteBeforeItWaitsAndNoThirdIsAskedFor() {
        var run = newRun()
        _ = run.start()
        _ = run.fetched(1, rows: keys(("a", t1)), total: nil)
        #expect(run.fetched(2, rows: keys(("b", t2)), total: nil).isEmpty, "two pages held at most")
        #expect(
            run.written(1, counts(1)) == [
                .write(page: 2, token: token(t2, "b")), .fetch(page: 3, token: token(t2, "b"), counting: false),
            ])
    }

    @Test func aFailedFetchEndsThePullOnceThePagesReceivedAreWritten() {
        var run = newRun()
        _ = run.start()
        _ = run.fetched(1, rows: keys(("a", t1)), total: nil)
        #expect(run.fetchFailed(lost).isEmpty, "page 1 is being written")
        #expect(run.written(1, counts(1)) == [.finish(error: lost)])
        #expect(run.result.written == 1)
    }

    @Test func aPageTheCursorRefusesIsNotWrittenAndNamesTheFault() {
        var run = newRun()
        _ = run.start()
        _ = run.fetched(1, rows: keys(("b", t2)), total: nil)
        _ = run.written(1, counts(1))
        #expect(
            run.fetched(2, rows: keys(("a", t1)), total: nil) == [
                .finish(error: .serviceFault(.ignoredFilter(table: "todoitem", rowId: "a")))
            ])
    }

    @Test func aFailedWriteDropsThePageAfterItCancelsTheFetchAndIsTheErrorTheRunEndsWith() {
        var run = newRun()
        _ = run.start()
        _ = run.fetched(1, rows: keys(("a", t1)), total: nil)
        _ = run.fetched(2, rows: keys(("b", t2)), total: nil)
        #expect(run.writeFailed(full) == [.finish(error: full)], "page 2 would skip page 1's rows")

        var other = newRun()
        _ = other.start()
        _ = other.fetched(1, rows: keys(("a", t1)), total: nil)
        #expect(other.writeFailed(full) == [.cancelFetch])
        #expect(other.fetchFailed(.stopped(.cancelled)) == [.finish(error: full)])
    }

    @Test func aWriteThatFailsAfterAFetchFailedNamesTheWritesError() {
        var run = newRun()
        _ = run.start()
        _ = run.fetched(1, rows: keys(("a", t1)), total: nil)
        _ = run.fetchFailed(lost)
        #expect(run.writeFailed(full) == [.finish(error: full)])
    }

    @Test func aCancelCancelsTheFetchAndWritesThePageWaiting() {
        var run = newRun()
        _ = run.start()
        _ = run.fetched(1, rows: keys(("a", t1)), total: nil)
        #expect(run.fetched(2, rows: keys(("b", t2)), total: nil).isEmpty)
        #expect(run.cancelled().isEmpty, "nothing on the wire; page 1 is being written")
        #expect(run.written(1, counts(1)) == [.write(page: 2, token: token(t2, "b"))])
        #expect(run.written(2, counts(1)) == [.finish(error: .stopped(.cancelled))])
        #expect(run.result.written == 2)

        var fetching = newRun()
        _ = fetching.start()
        #expect(fetching.cancelled() == [.cancelFetch])
        #expect(fetching.fetched(1, rows: keys(("a", t1)), total: nil) == [.finish(error: .stopped(.cancelled))])
        #expect(fetching.result.written == 0)
    }

    @Test func anEmptyFirstPageFinishesAtOnce() {
        var run = newRun()
        _ = run.start()
        #expect(run.fetched(1, rows: [], total: 0) == [.finish(error: nil)])
        #expect(run.receive(.written(1, counts(1))).isEmpty, "a finished run ignores late events")
    }
}
