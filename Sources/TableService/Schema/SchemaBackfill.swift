import Logging
import Synchronization

/// Runs the pending backfills of schema changes in the background: one pass per table for all of
/// its pending changes (``BackfillPass``), one batch (one transaction) at a time, each batch sized
/// by time (``BackfillPacer``), with writers let in between batches. Stopped (SIGTERM) or cut off
/// (a power cut), it resumes at the next start from the cursors each batch committed with its rows.
final class SchemaBackfill: Sendable {
    private let store: any TableStorage
    private let batchSize: Int?
    private let maximumBatches: Int?
    private let logger: Logger
    /// Whether ``run()`` has ended, and who waits for it (``finished()``).
    private let ending = Mutex<(ended: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// `batchSize` fixes the rows per batch (tests), `nil` sizes batches by time.
    init(store: any TableStorage, batchSize: Int? = nil, maximumBatches: Int? = nil, logger: Logger) {
        self.store = store
        self.batchSize = batchSize
        self.maximumBatches = maximumBatches
        self.logger = logger
    }

    /// Once the store is ready, stamps every pending change, until done or cancelled (a job of
    /// the service's ``BackgroundWork``; cancelled, it stops after the batch in progress).
    func run() async {
        defer {
            let waiting = ending.withLock { ending in
                ending.ended = true
                defer { ending.waiting = [] }
                return ending.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
        var batches = 0
        // A store that cannot open has nothing to backfill (its start reports why).
        guard (try? await store.ready()) != nil else { return }
        let clock = ContinuousClock()
        do {
            for pass in BackfillPass.passes(try await store.schemaChanges()) {
                var pacer = BackfillPacer(fixed: batchSize)
                let passStarted = clock.now
                var (passBatches, passRows) = (0, 0)
                while !Task.isCancelled {
                    if let maximumBatches, batches >= maximumBatches { return }
                    batches += 1
                    let limit = pacer.limit
                    let batch = try await store.backfillBatch(pass, limit: limit)
                    pacer.finished(rows: batch.rows, took: batch.held, writersWaited: batch.writersWaited)
                    passBatches += 1
                    passRows += batch.rows
                    if batch.rows < limit { break }
                    await Self.letWritersIn(store, rest: pacer.rest)
                }
                guard !Task.isCancelled else { return }
                let took = clock.now - passStarted
                for change in pass.changes {
                    let detail = "\(passRows) rows stamped in \(passBatches) batches, \(took)"
                    logger.info("schema change applied to every row: \(change.summary) (\(detail))")
                }
            }
        } catch {
            logger.error("a schema backfill stopped (it resumes at the next start): \(error)")
        }
    }

    /// Between two batches: the writers that waited for the batch's transaction go first. SQLite
    /// tells how many writes are under way (waiting for the write lock or in their transaction),
    /// and the backfill waits for them, a short while at most; elsewhere it yields its thread.
    /// Then it rests as the pacer says (writers waited: the next ones find the lock free).
    private static func letWritersIn(_ store: any TableStorage, rest: Duration) async {
        await Task.yield()
        var waited = 0
        while waited < 20, (store.writesUnderWay ?? 0) > 0 {
            try? await Task.sleep(for: .microseconds(250))
            waited += 1
        }
        if rest > .zero { try? await Task.sleep(for: rest) }
    }

    /// Waits until ``run()`` has ended: every pending backfill done, or stopped.
    func finished() async {
        await withCheckedContinuation { continuation in
            let ended = ending.withLock { ending in
                if !ending.ended { ending.waiting.append(continuation) }
                return ending.ended
            }
            if ended { continuation.resume() }
        }
    }
}
