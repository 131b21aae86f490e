import Foundation

/// How a SQLite service is backed up continuously (`todosync serve --backup-dir`).
public struct BackupSettings: Sendable {
    /// The backup folder: empty or missing at first, then this database's only.
    public var folder: String
    /// How far back a restore can go (`--backup-keep`): older generations are removed.
    public var keep: Duration
    /// The shortest time between two rounds: commits in between share one segment (and its syncs).
    public var shipInterval: Duration = .milliseconds(200)
    /// A round runs at least this often, for commits the store does not signal.
    public var idleInterval: Duration = .seconds(1)
    /// After a round failed (a full or missing backup disk), the pause before the next one, which
    /// begins a new generation with a base copy.
    public var pauseAfterFailure: Duration = .seconds(10)
    /// When the shipped log grows past this, a round holds the writer a moment so that its
    /// checkpoint copies the whole log and the next write starts it afresh.
    public var restartLogAfterBytes = 16 << 20

    public init(folder: String, keep: Duration = .seconds(7 * 86_400)) {
        self.folder = folder
        self.keep = keep
    }

    /// Milliseconds of `duration`.
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
