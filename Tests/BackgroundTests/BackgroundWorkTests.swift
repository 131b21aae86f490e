import Background
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(10))) struct BackgroundWorkTests {
    @Test func aJobCancelledAloneEndsWhileTheOthersGoOn() async {
        let work = BackgroundWork()
        work.begin()
        let (started, cancelledStarted) = (Latch(), Latch())
        let other = work.run {
            started.open()
            await Latch().wait()  // until cancelled
        }
        let cancelled = work.run {
            cancelledStarted.open()
            await Latch().wait()
        }
        await started.wait()
        await cancelledStarted.wait()
        cancelled.cancel()
        await cancelled.finished()
        #expect(cancelled.hasEnded)
        #expect(!other.hasEnded)
        await work.stop()
        #expect(other.hasEnded)
    }

    @Test func stopCancelsEveryJobAndWaitsUntilEachHasEnded() async {
        let work = BackgroundWork()
        let ended = Atomic<Int>(0)
        let begun = Atomic<Int>(0)
        let allBegun = Latch()
        work.begin()
        let jobs = (0..<5).map { _ in
            work.run {
                if begun.add(1, ordering: .relaxed).newValue == 5 { allBegun.open() }
                await Latch().wait()
                ended.add(1, ordering: .relaxed)
            }
        }
        await allBegun.wait()
        await work.stop()
        let endedCount = ended.load(ordering: .relaxed)
        #expect(endedCount == 5)
        let allEnded = jobs.allSatisfy(\.hasEnded)
        #expect(allEnded)
    }

    @Test func aJobGivenBeforeTheWorkBeginsRunsOnceItDoes() async {
        let work = BackgroundWork()
        let ran = Atomic<Bool>(false)
        let job = work.run { ran.store(true, ordering: .relaxed) }
        work.begin()
        await job.finished()
        let didRun = ran.load(ordering: .relaxed)
        #expect(didRun)
        await work.stop()
    }

    @Test func aJobGivenAfterTheWorkStoppedNeverRunsAndHasEnded() async {
        let work = BackgroundWork()
        work.begin()
        await work.stop()
        let ran = Atomic<Bool>(false)
        let job = work.run { ran.store(true, ordering: .relaxed) }
        #expect(job.hasEnded)
        await job.finished()
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }
}

@Suite(.timeLimit(.minutes(10))) struct LatchTests {
    @Test func everyWaiterGoesOnWhenTheLatchOpensAndLaterWaitsReturnAtOnce() async {
        let latch = Latch()
        let work = BackgroundWork()
        work.begin()
        let waiters = (0..<3).map { _ in work.run { await latch.wait() } }
        let noneEnded = waiters.allSatisfy { !$0.hasEnded }
        #expect(noneEnded)
        latch.open()
        for waiter in waiters { await waiter.finished() }
        await latch.wait()
        #expect(latch.isOpen)
        await work.stop()
    }

    @Test func aCancelledWaiterGivesUpAloneAndTheLatchStaysClosed() async {
        let latch = Latch()
        let waiter = Task { await latch.wait() }
        waiter.cancel()
        await waiter.value
        #expect(!latch.isOpen)
        let other = Task { await latch.wait() }
        latch.open()
        await other.value
    }
}
