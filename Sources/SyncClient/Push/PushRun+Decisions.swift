/// What a ``PushRun`` decides from the state it is in: the commits, sends and drains that follow an event.
extension PushRun {
    mutating func absorbCommit(
        _ outcome: PushDriver.Stored, into pipeline: inout Pipeline, running: Bool
    ) {
        guard let (stored, recorded, asked) = pipeline.committing.take() else { return }
        for id in stored {
            result.add(.pushed, id)
            pipeline.settle(id)
        }
        var resent: [PushAttempt] = []
        for (id, decision) in zip(recorded, outcome.decided) {
            switch decision {
            case .settled(let outcome):
                settle(id, outcome, in: &pipeline)
            case .resend(let attempt):
                pipeline.policyApplied.insert(id)
                resent.append(attempt)
                // Stopping: put back with the attempts not sent, its decision held for the next push.
                if !running { answered += 1 }
            }
        }
        for (id, attempt) in zip(asked, outcome.begun) {
            guard let attempt else {
                settle(id, .skipped, in: &pipeline)
                continue
            }
            if pipeline.resending.remove(id) != nil { resent.append(attempt) } else { pipeline.ready.append(attempt) }
        }
        pipeline.ready.insert(contentsOf: resent, at: 0)
    }

    mutating func dropCommit(from pipeline: inout Pipeline) {
        guard let (stored, recorded, asked) = pipeline.committing.take() else { return }
        answered += recorded.count
        for id in stored + recorded + asked { pipeline.settle(id) }
    }

    mutating func absorb(_ id: Int64, _ answer: Answer, into pipeline: inout Pipeline) {
        pipeline.inFlight.remove(id)
        switch answer {
        case .applied(let applied):
            pipeline.received.append(applied)
            answered += 1
        case .conflicted(let conflict):
            pipeline.conflicts.append(conflict)
        case .settled(let outcome):
            settle(id, outcome, in: &pipeline)
        }
    }

    mutating func settle(_ id: Int64, _ outcome: OperationOutcome, in pipeline: inout Pipeline) {
        result.add(outcome, id)
        answered += 1
        pipeline.settle(id)
    }

    /// The next actions of a running pipeline: sends up to the window, then a transaction when there
    /// are attempts to begin or answers to store, or the end.
    mutating func advance(_ pipeline: Pipeline) -> [Action] {
        var pipeline = pipeline
        var actions: [Action] = []
        // With a window of 1, nothing overtakes an operation whose policy may send it again, nor one
        // that waits to be sent again.
        let holding = window == 1 && (pipeline.deciding || !pipeline.pausing.isEmpty || !pipeline.resending.isEmpty)
        while !holding, pipeline.inFlight.count < window, !pipeline.ready.isEmpty {
            let attempt = pipeline.ready.removeFirst()
            pipeline.inFlight.insert(attempt.operationId)
            let policy = applyingPolicy && !pipeline.policyApplied.contains(attempt.operationId)
            actions.append(.send(attempt, applyingPolicy: policy))
        }
        if pipeline.committing == nil, let commit = nextCommit(&pipeline) {
            actions.append(commit)
        }
        if pipeline.isEmpty {
            state = .finished
            actions.append(.finish(store: [], record: [], release: [], error: nil))
        } else {
            state = .running(pipeline)
        }
        return actions
    }

    /// The transaction to run next, if one is due: when attempts run low (fewer ready than the window,
    /// or than half a batch) and operations can begin; when a batch of answers waits; when answers
    /// wait and nothing else is on its way; or when a conflict waits and the wire has room for what
    /// its policy may send again (with a window of 1 at once, since nothing overtakes it; conflicts
    /// met while the window is full, or while a transaction runs, are recorded together). A
    /// transaction stores every answer received and records every conflict, and since it stores
    /// before it begins, the items of stored answers may take their next operation in it.
    func nextCommit(_ pipeline: inout Pipeline) -> Action? {
        var next = pipeline
        for answer in next.received {
            if let item = next.items[answer.operationId] { next.free(item, heldBy: answer.operationId) }
        }
        var begin: [Int64] = []
        if next.hasWaiting && next.ready.count < max(window, batchSize / 2) {
            begin = take(batchSize, from: &next)
        }
        let answers = next.received.count + next.conflicts.count
        let conflictDue =
            !next.conflicts.isEmpty && (window == 1 || next.inFlight.count + next.ready.count < window)
        let storing =
            answers > 0
            && (!begin.isEmpty || answers >= batchSize || conflictDue || (next.inFlight.isEmpty && next.ready.isEmpty))
        guard storing || !begin.isEmpty else { return nil }
        let (store, record) = storing ? (next.received, next.conflicts) : ([], [])
        if storing { (next.received, next.conflicts) = ([], []) }
        next.committing = (store.map(\.operationId), record.map(\.operationId), begin)
        pipeline = next
        return .commit(store: store, record: record, begin: begin)
    }

    /// Takes up to `count` waiting operations in queue order, passing over those whose item is busy
    /// (with a window of 1, none is passed: the first one whose item is busy ends the batch).
    func take(_ count: Int, from pipeline: inout Pipeline) -> [Int64] {
        var taken: [Int64] = []
        var passed: [Queued] = []
        var blocked: Set<String> = []
        func consider(_ operation: Queued) {
            if taken.count < count, pipeline.busy[operation.item] == nil, !blocked.contains(operation.item) {
                pipeline.busy[operation.item] = operation.id
                pipeline.items[operation.id] = operation.item
                taken.append(operation.id)
            } else {
                blocked.insert(operation.item)
                passed.append(operation)
            }
        }
        for operation in pipeline.passed { consider(operation) }
        while pipeline.next < pipeline.waiting.count, taken.count < count {
            let operation = pipeline.waiting[pipeline.next]
            if window == 1, pipeline.busy[operation.item] != nil { break }
            consider(operation)
            pipeline.next += 1
        }
        pipeline.passed = passed
        return taken
    }

    /// After the first failure: nothing new is sent, and the run ends once no request and no
    /// transaction is out. The requests on the wire are answered and their answers stored (a failed
    /// request never costs the others theirs); operations pausing before a resend stay attempted,
    /// and the next push sends them.
    mutating func drain(_ pipeline: Pipeline, _ error: SyncError) -> [Action] {
        var pipeline = pipeline
        for id in pipeline.pausing.keys { pipeline.settle(id) }
        pipeline.pausing = [:]
        guard pipeline.inFlight.isEmpty, pipeline.committing == nil else {
            state = .draining(pipeline, error: error)
            return []
        }
        state = .finished
        return [.finish(store: pipeline.received, record: pipeline.conflicts, release: pipeline.ready, error: error)]
    }
}
