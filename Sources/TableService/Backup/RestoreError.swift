import Foundation
import Storage

/// Why a restore (or its plan) was refused; the target is untouched in every case.
public enum RestoreError: Error, Sendable, CustomStringConvertible {
    case beforeOldest(asked: Int64, oldest: Int64)
    case inFuture(asked: Int64, now: Int64)
    /// `--backup-dir` is no backup folder, holds nothing, or has a damaged file.
    case backup(BackupError)
    /// `--database` belongs to another backup than `--backup-dir`.
    case otherDatabase(database: String, folder: String)
    /// A service runs on `--database`.
    case serviceRunning(ServiceFileLockError)
    /// The file built fails SQLite's integrity check.
    case integrity(String)
    /// SQLite refused to open, check or write a file.
    case database(path: String, reason: String)

    public var description: String {
        switch self {
        case .beforeOldest(let asked, let oldest):
            "--to \(RestoreTime.text(asked)) is before the oldest base copy in --backup-dir "
                + "(\(RestoreTime.text(oldest))): give a time after it."
        case .inFuture(let asked, let now):
            "--to \(RestoreTime.text(asked)) is in the future (it is \(RestoreTime.text(now))): give a past time, "
                + "or latest."
        case .backup(let error):
            "--backup-dir: \(error.description)"
        case .otherDatabase(let database, let folder):
            "--database \(database) is not the database whose backups are in --backup-dir \(folder) (nor restored "
                + "from them): give the backup folder of this database, or another --database file."
        case .serviceRunning(let error):
            "--database: \(error.description)"
        case .integrity(let report):
            "The restored database fails SQLite's integrity check (\(report)); --database was left as it was. "
                + "Try another --to, or another copy of the backup folder."
        case .database(let path, let reason):
            "Cannot restore into \(path): \(reason). --database was left as it was."
        }
    }
}
