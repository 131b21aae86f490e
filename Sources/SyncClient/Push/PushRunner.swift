/// Performs the actions of a ``PushRun``: each request and each transaction is a child task whose
/// result goes back into the run as an event, one at a time, until the run finishes.
///
/// Transactions suspend the task while GRDB writes on its own queue (no cooperative thread waits for
/// SQLite), and they run to their end even when the push is cancelled: answers that came back are
/// stored, and attempts not sent are put back, whatever stopped the run.
struct PushRunner: Sendable {
    /// Sends attempts and stores answers.
    let driver: PushDriver
    /// Told how many operations have had their answer, after each event.
    let progress: @Sendable (Int) -> Void

    /// Runs `run` to its end: what it did, and the error that stopped it (nil: every operation was settled).
    func run(_ run: PushRun) async -> (result: PushResult, error: SyncError?) {
        var run = run
        let clock = driver.transport.deadlines.clock
        let ending = await withTaskGroup(of: PushRun.Event.self) { group in
            var actions = run.start()
            var cancelSeen = false
            while true {
                for action in actions {
                    switch action {
                    case .send(let attempt, let applyingPolicy):
                        group.addTask { await send(attempt, applyingPolicy: applyingPolicy) }
                    case .commit(let answers, let conflicts, let begin):
                        group.addTask { await commit(answers, recording: conflicts, thenBegin: begin) }
                    case .resend(let id, let pause):
                        group.addTask {
                            try? await clock.sleep(for: pause)
                            return .resendDue(id)
                        }
                    case .cancelRequests:
                        group.cancelAll()
                    case .finish(let answers, let conflicts, let unsent, let error):
                        // Only pauses can be left: the run waits for every request and transaction.
                        group.cancelAll()
                        return (answers, conflicts, unsent, error)
                    }
                }
                if !cancelSeen, Task.isCancelled {
                    cancelSeen = true
                    actions = run.cancelled()
                    continue
                }
                // The run always has a child out until it finishes.
                guard let event = await group.next() else { return ([], [], [], SyncError.stopped(.cancelled)) }
                actions = run.receive(event)
                progress(run.answered)
            }
        }
        let (answers, conflicts, begun, error) = ending
        var unsent = begun
        var result = run.result
        if let stored = try? await driver.store(answers, recording: conflicts) {
            for answer in answers { result.add(.pushed, answer.operationId) }
            for (conflict, decision) in zip(conflicts, stored.decided) {
                switch decision {
                case .settled(let outcome): result.add(outcome, conflict.operationId)
                // Not sent in this run: its policy's decision stays held with it for the next push.
                case .resend(let attempt): unsent.append(attempt)
                }
            }
        }
        try? await driver.queue.release(unsent)
        result.sortInQueueOrder()
        return (result, error)
    }

    /// One request, with the conflict policy when it applies.
    private func send(_ attempt: PushAttempt, applyingPolicy: Bool) async -> PushRun.Event {
        do {
            return .answered(attempt.operationId, try await driver.settle(attempt, applyingPolicy: applyingPolicy))
        } catch {
            return .requestFailed(attempt.operationId, error)
        }
    }

    /// One transaction (cancelling the push does not interrupt it: see ``LocalStore/asyncWrite(_:)``).
    private func commit(
        _ answers: [PushDriver.AppliedAnswer], recording conflicts: [PushDriver.ConflictAnswer], thenBegin ids: [Int64]
    ) async -> PushRun.Event {
        do {
            return .committed(try await driver.store(answers, recording: conflicts, thenBegin: ids))
        } catch {
            return .commitFailed(error)
        }
    }
}
