import Logging

/// Runs the pending backfills of schema changes in the background, one batch (one transaction)
/// at a time, so writers are answered between batches. Stopped (SIGTERM) or cut off (a power
/// cut), it resumes at the next start from the cursor each batch committed with its rows.
final class SchemaBackfill: Sendable {
    /// What to do after a batch.
    enum Step: Equatable {
        /// Another batch of the same backfill.
        case batch(Int)
        /// The next backfill (at that index of the pending ones), or none left.
        case next(Int)
    }

    /// Rows per batch: large enough to stamp quickly, small enough that a writer waits little.
    static let batchSize = 500

    private let task: Task<Void, Never>

    /// Starts once `store` is ready.
    init(
        store: any TableStorage, batchSize: Int = SchemaBackfill.batchSize, maximumBatches: Int? = nil,
        logger: Logger
    ) {
        task = Task {
            var batches = 0
            // A store that cannot open has nothing to backfill (its start reports why).
            guard (try? await store.ready()) != nil else { return }
            do {
                let pending = try await store.schemaChanges().filter {
                    if case .pending = $0.backfill { true } else { false }
                }
                var index = 0
                while index < pending.count, !Task.isCancelled {
                    if let maximumBatches, batches >= maximumBatches { return }
                    batches += 1
                    let stamped = try await store.backfillBatch(pending[index], limit: batchSize)
                    switch Self.step(stamped: stamped, limit: batchSize, index: index) {
                    case .batch: continue
                    case .next(let following):
                        logger.info("schema change applied to every row: \(pending[index].summary)")
                        index = following
                    }
                }
            } catch {
                logger.error("a schema backfill stopped (it resumes at the next start): \(error)")
            }
        }
    }

    /// After a batch of `stamped` rows of the backfill at `index`: a full batch may have more.
    static func step(stamped: Int, limit: Int, index: Int) -> Step {
        stamped < limit ? .next(index + 1) : .batch(index)
    }

    /// Waits until every pending backfill is done (or stopped).
    func finished() async {
        await task.value
    }

    /// Stops after the batch in progress.
    func stop() {
        task.cancel()
    }
}
