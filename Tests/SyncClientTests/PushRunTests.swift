import HTTPTypes
import Testing

@testable import SyncClient

// The push run's transitions, one event at a time, with no store and no sockets.

private func queued(_ id: Int64, _ item: String) -> PushRun.Queued { .init(id: id, item: item) }

private func attempt(_ id: Int64, _ item: String = "") -> PushAttempt {
    PushAttempt(operationId: id, table: "todoitem", itemId: item.isEmpty ? "item\(id)" : item, kind: .insert)
}

private func applied(_ id: Int64) -> PushDriver.AppliedAnswer { .init(operationId: id, serverItem: nil) }

private func conflict(_ id: Int64) -> PushDriver.ConflictAnswer {
    .init(
        operationId: id, serverItem: ["id": .string("item\(id)")], status: .preconditionFailed, sent: nil,
        applyingPolicy: true)
}

/// The ids of the sends among `actions`.
private func sends(_ actions: [PushRun.Action]) -> [Int64] {
    actions.compactMap {
        if case .send(let attempt, _) = $0 { return attempt.operationId }
        return nil
    }
}

/// The commit among `actions`, as (stored ids, recorded ids, begun ids).
private func commit(_ actions: [PushRun.Action]) -> (stored: [Int64], recorded: [Int64], begin: [Int64])? {
    for action in actions {
        if case .commit(let store, let record, let begin) = action {
            return (store.map(\.operationId), record.map(\.operationId), begin)
        }
    }
    return nil
}

private func finish(
    _ actions: [PushRun.Action]
) -> (stored: [Int64], recorded: [Int64], released: [Int64], error: SyncError?)? {
    for action in actions {
        if case .finish(let store, let record, let release, let error) = action {
            return (store.map(\.operationId), record.map(\.operationId), release.map(\.operationId), error)
        }
    }
    return nil
}

/// `count` operations, each of its own item.
private func distinctItems(_ count: Int) -> [PushRun.Queued] {
    (1...Int64(count)).map { queued($0, "item\($0)") }
}

@Suite struct PushRunTests {
    @Test func startBeginsTheFirstBatchInOneTransaction() {
        var run = PushRun(distinctItems(40), window: 16)
        let actions = run.start()
        #expect(actions.count == 1)
        #expect(commit(actions)?.begin == Array(1...16))
        #expect(commit(actions)?.stored == [])
    }

    @Test func anEmptyQueueFinishesAtOnce() {
        var run = PushRun([], window: 16)
        #expect(finish(run.start())?.error == nil)
    }

    @Test func attemptsBegunAreSentUpToTheWindowAndTheNextBatchBegins() {
        var run = PushRun(distinctItems(40), window: 4)
        _ = run.start()
        let actions = run.committed(.init(begun: (1...16).map { attempt($0) }))
        #expect(sends(actions) == [1, 2, 3, 4])
        // Twelve are ready, at or above the low water mark (half a batch): nothing more to begin yet.
        #expect(commit(actions) == nil)
    }

    @Test func aWindowOfOneSendsOneOperationAtATimeInQueueOrder() {
        var run = PushRun(distinctItems(3), window: 1)
        _ = run.start()
        #expect(sends(run.committed(.init(begun: (1...3).map { attempt($0) }))) == [1])
        #expect(sends(run.answered(1, .applied(applied(1)))) == [2])
        #expect(sends(run.answered(2, .settled(.failed))) == [3])
    }

    @Test func anAnswerFreesItsSlotForTheNextReadyAttempt() {
        var run = PushRun(distinctItems(16), window: 2)
        _ = run.start()
        #expect(sends(run.committed(.init(begun: (1...16).map { attempt($0) }))) == [1, 2])
        let actions = run.answered(2, .applied(applied(2)))
        #expect(sends(actions) == [3])
        // One answer waits; requests are still out: it is stored later, with others.
        #expect(commit(actions) == nil)
    }

    @Test func answersAreStoredABatchAtATime() {
        var run = PushRun(distinctItems(16), window: 16)
        _ = run.start()
        #expect(sends(run.committed(.init(begun: (1...16).map { attempt($0) }))).count == 16)
        for id in Int64(1)...15 {
            #expect(commit(run.answered(id, .applied(applied(id)))) == nil)
        }
        #expect(commit(run.answered(16, .applied(applied(16))))?.stored == Array(1...16))
        let end = run.committed(.init(begun: []))
        #expect(finish(end)?.error == nil)
        #expect(run.result.pushed == Array(1...16))
    }

    @Test func theLastAnswersAreStoredWhenNothingElseIsOut() {
        var run = PushRun(distinctItems(2), window: 16)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1), attempt(2)]))
        #expect(commit(run.answered(1, .applied(applied(1)))) == nil)
        #expect(commit(run.answered(2, .applied(applied(2))))?.stored == [1, 2])
        #expect(finish(run.committed(.init(begun: [])))?.error == nil)
    }

    @Test func anItemsSecondOperationBeginsOnlyAfterTheFirstIsStored() {
        var run = PushRun([queued(1, "a"), queued(2, "b"), queued(3, "a")], window: 16)
        #expect(commit(run.start())?.begin == [1, 2])
        _ = run.committed(.init(begun: [attempt(1, "a"), attempt(2, "b")]))
        _ = run.answered(2, .applied(applied(2)))
        // The answer of 1 arrives: nothing else is out, so both are stored and 3 begins with them.
        let actions = run.answered(1, .applied(applied(1)))
        #expect(commit(actions)?.stored == [2, 1])
        #expect(commit(actions)?.begin == [3])
    }

    @Test func aBlockedOperationIsPassedByLaterItemsWithAWindow() {
        var run = PushRun([queued(1, "a"), queued(2, "a"), queued(3, "b")], window: 4)
        #expect(commit(run.start())?.begin == [1, 3])
    }

    @Test func aBlockedOperationEndsTheBatchWithAWindowOfOne() {
        var run = PushRun([queued(1, "a"), queued(2, "a"), queued(3, "b")], window: 1)
        #expect(commit(run.start())?.begin == [1])
    }

    @Test func answersWaitingForTheirStoreAreStoredWhenOperationsWaitOnlyForThem() {
        var run = PushRun([queued(1, "a"), queued(2, "b"), queued(3, "a")], window: 16)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1, "a"), attempt(2, "b")]))
        // 2 is still out, but 3 waits only for 1's answer to be stored: store it now.
        let actions = run.answered(1, .applied(applied(1)))
        #expect(commit(actions)?.stored == [1])
        #expect(commit(actions)?.begin == [3])
    }

    @Test func anOperationNotToBeSentIsSkipped() {
        var run = PushRun(distinctItems(2), window: 16)
        _ = run.start()
        let actions = run.committed(.init(begun: [nil, attempt(2)]))
        #expect(sends(actions) == [2])
        #expect(run.result.skipped == [1])
        #expect(run.answered == 1)
    }

    @Test func aConflictSettledByItsPolicyIsBegunAgainAndSentFirst() {
        var run = PushRun(distinctItems(3), window: 1)
        _ = run.start()
        _ = run.committed(.init(begun: (1...3).map { attempt($0) }))
        // Nothing overtakes the conflict while its policy decides, in the next transaction.
        let recording = run.answered(1, .conflicted(conflict(1)))
        #expect(sends(recording) == [])
        #expect(commit(recording)?.recorded == [1])
        // Its policy sends it again: the same transaction began it, and it goes first.
        let again = run.committed(.init(decided: [.resend(attempt(1))]))
        guard case .send(let resent, let applyingPolicy)? = again.first else {
            Issue.record("expected the operation to be sent again first, got \(again)")
            return
        }
        #expect(resent.operationId == 1)
        // A second conflict of the same operation in this run waits for a person.
        #expect(!applyingPolicy)
    }

    @Test func aOneOperationRunNeverAppliesThePolicy() {
        var run = PushRun([queued(7, "a")], window: 1, applyingPolicy: false)
        _ = run.start()
        #expect(run.committed(.init(begun: [attempt(7)])) == [.send(attempt(7), applyingPolicy: false)])
    }

    @Test func aFailedRequestLetsTheOthersAnswerAndFinishesOnceTheyAreBack() {
        var run = PushRun(distinctItems(20), window: 3)
        _ = run.start()
        _ = run.committed(.init(begun: (1...16).map { attempt($0) }))
        // Nothing is cancelled: the answers on their way are read and stored.
        #expect(run.requestFailed(2, .stopped(.timedOut)) == [])
        #expect(run.answered(1, .applied(applied(1))) == [])
        let finished = finish(run.answered(3, .applied(applied(3))))
        #expect(finished?.error == .stopped(.timedOut))
        #expect(finished?.stored == [1, 3])
        #expect(finished?.released == Array(4...16))
    }

    @Test func aCancelCancelsTheRequestsOnTheWire() {
        var run = PushRun(distinctItems(4), window: 4)
        _ = run.start()
        _ = run.committed(.init(begun: (1...4).map { attempt($0) }))
        #expect(run.cancelled() == [.cancelRequests])
        _ = run.answered(1, .applied(applied(1)))
        _ = run.requestFailed(2, .stopped(.cancelled))
        _ = run.requestFailed(3, .stopped(.cancelled))
        let finished = finish(run.requestFailed(4, .stopped(.cancelled)))
        #expect(finished?.error == .stopped(.cancelled))
        #expect(finished?.stored == [1])
    }

    @Test func aStopWaitsForTheRunningTransactionAndReleasesWhatItBegan() {
        var run = PushRun(distinctItems(40), window: 16)
        _ = run.start()
        // All sixteen are sent, and the next sixteen are being begun meanwhile.
        #expect(commit(run.committed(.init(begun: (1...16).map { attempt($0) })))?.begin == Array(17...32))
        for id in Int64(1)...16 { #expect(run.answered(id, .applied(applied(id))) == []) }
        // Cancelled while that transaction runs: the run waits for it.
        #expect(run.cancelled() == [])
        let end = finish(run.committed(.init(begun: (17...32).map { attempt($0) })))
        #expect(end?.error == .stopped(.cancelled))
        #expect(end?.stored == Array(1...16))
        #expect(end?.released == Array(17...32))
    }

    @Test func aFailedTransactionStopsTheRun() {
        var run = PushRun(distinctItems(4), window: 16)
        _ = run.start()
        let failure = SyncError.storage(StoreFailure(kind: .diskFull, detail: "database or disk is full"))
        #expect(finish(run.commitFailed(failure))?.error == failure)
    }

    @Test func aCancelBeforeTheStartFinishesWithoutWork() {
        var run = PushRun(distinctItems(4), window: 16)
        #expect(run.cancelled() == [.finish(store: [], record: [], release: [], error: .stopped(.cancelled))])
        #expect(run.start() == [])
    }

    @Test func aConflictAnsweredWhileStoppingIsRecordedAtTheEnd() {
        var run = PushRun(distinctItems(2), window: 2)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1), attempt(2)]))
        _ = run.requestFailed(2, .stopped(.timedOut))
        let end = finish(run.answered(1, .conflicted(conflict(1))))
        #expect(end?.error == .stopped(.timedOut))
        #expect(end?.recorded == [1])
        #expect(end?.released == [])
    }

    @Test func aPolicyDecisionMadeWhileStoppingStaysHeldForTheNextPush() {
        var run = PushRun(distinctItems(2), window: 1)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1), attempt(2)]))
        #expect(commit(run.answered(1, .conflicted(conflict(1))))?.recorded == [1])
        // Cancelled while that transaction runs; its policy then sends 1 again: not in this run.
        #expect(run.cancelled() == [])
        let end = finish(run.committed(.init(decided: [.resend(attempt(1))])))
        #expect(end?.error == .stopped(.cancelled))
        #expect(end?.recorded == [] && end?.released == [1, 2])
    }

    @Test func aConflictIsRecordedAtOnceAndItsItemWaitsForTheDecision() {
        // 1 and 3 change item a, 2 changes item b.
        var run = PushRun([queued(1, "a"), queued(2, "b"), queued(3, "a")], window: 16)
        #expect(commit(run.start())?.begin == [1, 2])
        _ = run.committed(.init(begun: [attempt(1, "a"), attempt(2, "b")]))
        // A transaction records 1's conflict at once; 3 waits for 1's decision.
        let recording = commit(run.answered(1, .conflicted(conflict(1))))
        #expect(recording?.recorded == [1] && recording?.begin == [])
        // 2's answer waits while that transaction runs.
        #expect(run.answered(2, .applied(applied(2))) == [])
        // The policy sends 1 again, begun by that same transaction; 3 still waits.
        let resent = run.committed(.init(decided: [.resend(attempt(1, "a"))]))
        #expect(resent == [.send(attempt(1, "a"), applyingPolicy: false)])
        // Both answers are stored by the transaction that begins 3.
        let last = commit(run.answered(1, .applied(applied(1))))
        #expect(last?.stored == [2, 1] && last?.begin == [3])
    }

    @Test func conflictsMetWhileTheWindowIsFullAreRecordedTogether() {
        var run = PushRun(distinctItems(6), window: 2)
        _ = run.start()
        #expect(sends(run.committed(.init(begun: (1...6).map { attempt($0) }))) == [1, 2])
        // Attempts ready keep the wire full: no transaction for each conflict.
        for (id, next) in [(1, 3), (2, 4), (3, 5), (4, 6)] as [(Int64, Int64)] {
            let actions = run.answered(id, .conflicted(conflict(id)))
            #expect(sends(actions) == [next])
            #expect(commit(actions) == nil)
        }
        // Once the wire has room for what their policies may send again, one transaction records them.
        #expect(commit(run.answered(5, .conflicted(conflict(5))))?.recorded == [1, 2, 3, 4, 5])
    }

    @Test func eventsAfterTheEndChangeNothing() {
        var run = PushRun([], window: 1)
        _ = run.start()
        #expect(run.answered(1, .applied(applied(1))) == [])
        #expect(run.requestFailed(1, .stopped(.timedOut)) == [])
        #expect(run.committed(.init(begun: [])) == [])
    }

}

// A dropped connection, decided one event at a time: resent after a pause, a bounded number of times.
@Suite struct PushRunRetryTests {
    private static let lost = SyncError.stopped(.connectionLost("the connection closed"))
    private static let retry = ConnectionRetry(retries: 2, firstPause: .milliseconds(50))

    /// The resend among `actions`.
    private func resend(_ actions: [PushRun.Action]) -> (id: Int64, pause: Duration)? {
        for action in actions {
            if case .resend(let id, let pause) = action { return (id, pause) }
        }
        return nil
    }

    @Test func aDroppedConnectionIsSentAgainAfterAPauseWhileTheOthersGoOn() {
        var run = PushRun(distinctItems(3), window: 3, retry: Self.retry)
        _ = run.start()
        _ = run.committed(.init(begun: (1...3).map { attempt($0) }))
        let dropped = run.requestFailed(2, Self.lost)
        #expect(resend(dropped)?.id == 2)
        #expect(resend(dropped)?.pause == .milliseconds(50))
        #expect(finish(dropped) == nil)
        // The others' answers are stored meanwhile; the run waits for the resend.
        _ = run.answered(1, .applied(applied(1)))
        #expect(commit(run.answered(3, .applied(applied(3))))?.stored == [1, 3])
        #expect(finish(run.committed(.init())) == nil)
        // After the pause it is begun again, then sent before anything else.
        #expect(commit(run.resendDue(2))?.begin == [2])
        #expect(sends(run.committed(.init(begun: [attempt(2)]))) == [2])
        #expect(commit(run.answered(2, .applied(applied(2))))?.stored == [2])
        let end = finish(run.committed(.init()))
        #expect(end?.error == nil)
        #expect(Set(run.result.pushed) == [1, 2, 3])
    }

    @Test func eachResendOfAnOperationWaitsTwiceAsLong() {
        var run = PushRun(distinctItems(1), window: 1, retry: Self.retry)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1)]))
        #expect(resend(run.requestFailed(1, Self.lost))?.pause == .milliseconds(50))
        _ = run.resendDue(1)
        _ = run.committed(.init(begun: [attempt(1)]))
        #expect(resend(run.requestFailed(1, Self.lost))?.pause == .milliseconds(100))
    }

    @Test func theLastDroppedConnectionStopsThePushWithItsError() {
        var run = PushRun(distinctItems(1), window: 1, retry: Self.retry)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1)]))
        for _ in 1...2 {
            #expect(resend(run.requestFailed(1, Self.lost)) != nil)
            _ = run.resendDue(1)
            _ = run.committed(.init(begun: [attempt(1)]))
        }
        let end = finish(run.requestFailed(1, Self.lost))
        #expect(end?.error == Self.lost)
        #expect(end?.released == [])
    }

    @Test func otherFailuresAreNeverSentAgain() {
        for error in [SyncError.stopped(.unreachable("refused")), .stopped(.timedOut), .stopped(.stalled(seconds: 30))]
        {
            var run = PushRun(distinctItems(1), window: 1, retry: Self.retry)
            _ = run.start()
            _ = run.committed(.init(begun: [attempt(1)]))
            #expect(finish(run.requestFailed(1, error))?.error == error)
        }
    }

    @Test func anItemsNextOperationWaitsBehindTheOneThatPauses() {
        var run = PushRun([queued(1, "a"), queued(2, "a"), queued(3, "b")], window: 4, retry: Self.retry)
        #expect(commit(run.start())?.begin == [1, 3])
        _ = run.committed(.init(begun: [attempt(1, "a"), attempt(3, "b")]))
        _ = run.requestFailed(1, Self.lost)
        // 3's answer is stored, but 2 is not begun: its item's first operation has not been answered.
        #expect(commit(run.answered(3, .applied(applied(3))))?.begin == [])
        _ = run.committed(.init())
        #expect(commit(run.resendDue(1))?.begin == [1])
        _ = run.committed(.init(begun: [attempt(1, "a")]))
        #expect(commit(run.answered(1, .applied(applied(1))))?.begin == [2])
    }

    @Test func aWindowOfOneSendsNothingElseDuringThePause() {
        var run = PushRun(distinctItems(2), window: 1, retry: Self.retry)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1), attempt(2)]))
        #expect(sends(run.requestFailed(1, Self.lost)) == [])
        _ = run.resendDue(1)
        #expect(sends(run.committed(.init(begun: [attempt(1)]))) == [1])
        #expect(sends(run.answered(1, .applied(applied(1)))) == [2])
    }

    @Test func aStopDuringAPauseLeavesTheOperationAttemptedAndFinishes() {
        var run = PushRun(distinctItems(2), window: 2, retry: Self.retry)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1), attempt(2)]))
        _ = run.requestFailed(1, Self.lost)
        let end = finish(run.requestFailed(2, .stopped(.timedOut)))
        #expect(end?.error == .stopped(.timedOut))
        #expect(end?.released == [])
        #expect(run.resendDue(1) == [])
    }

    @Test func aCancelDuringAPauseFinishesAtOnce() {
        var run = PushRun(distinctItems(1), window: 1, retry: Self.retry)
        _ = run.start()
        _ = run.committed(.init(begun: [attempt(1)]))
        _ = run.requestFailed(1, Self.lost)
        #expect(finish(run.cancelled())?.error == .stopped(.cancelled))
    }
}
