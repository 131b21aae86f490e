/// How many rows the next backfill batch takes, and how long the backfill rests after a batch:
/// sized by time, not by rows. A batch holds the table's writers for as long as its transaction
/// runs (SQLite has one writer; PostgreSQL's writers wait for the table's stamp, which the batch
/// holds until it commits), so the pacer aims each batch at a time whatever the machine, the row
/// width or the load, growing or shrinking the next batch by what the last one took.
///
/// Writers come first: while writes wait for a batch, batches aim at ``whileWriting`` and the
/// backfill rests as long as each batch held them, so that a writer never waits long and gets at
/// least half of the writer's time (and of the CPU); with nobody writing, batches aim at ``alone``
/// and follow each other at once.
struct BackfillPacer: Sendable, Equatable {
    /// How long a batch aims to hold the writers when nobody else writes.
    static let alone: Duration = .milliseconds(4)
    /// How long a batch aims to hold the writers while some wait for it: a small share of a write's p99.
    static let whileWriting: Duration = .milliseconds(1)
    /// The fewest and most rows in a batch.
    static let minimum = 32
    static let maximum = 20_000

    /// Rows the next batch takes.
    private(set) var limit: Int
    /// How long to rest before the next batch.
    private(set) var rest: Duration = .zero
    /// A fixed size (tests that stop after a number of rows); `nil` adapts.
    private let fixed: Int?

    /// A pacer adapting from a first batch of 256 rows, or one of `fixed` rows every time.
    init(fixed: Int? = nil) {
        self.fixed = fixed
        limit = fixed ?? 256
    }

    /// A batch of `rows` rows (of ``limit`` asked) took `duration`, and writes waited for it or
    /// not: the next batch's size aims at the target time, changing by at most a factor of two
    /// per batch so that one slow batch (a checkpoint, a busy CPU) does not swing it.
    mutating func finished(rows: Int, took duration: Duration, writersWaited: Bool = false) {
        rest = writersWaited ? duration : .zero
        guard fixed == nil, rows > 0 else { return }
        let seconds = Self.seconds(duration)
        let perRow = max(seconds, 1e-6) / Double(rows)
        let wanted = Self.seconds(writersWaited ? Self.whileWriting : Self.alone) / perRow
        let bounded = min(max(wanted, Double(limit) / 2), Double(limit) * 2)
        limit = min(max(Int(bounded), Self.minimum), Self.maximum)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// What one backfill batch did: the rows it stamped, and how long it held the table's writers
/// (its transaction; not the wait for the commit to reach the disk, during which writers go on).
struct BackfillBatch: Sendable, Equatable {
    let rows: Int
    let held: Duration
    /// Whether writes waited for the batch's transaction when it committed (SQLite only says).
    var writersWaited = false
}
