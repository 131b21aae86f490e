import Foundation

/// Why a backup could not be written or read; each message says what the user can do.
public enum BackupError: Error, Sendable, CustomStringConvertible {
    /// A file of the backup or of the database could not be read or written (`errno`).
    case io(path: String, operation: String, errno: CInt)
    /// The folder holds no backup (no `backup.json`).
    case notABackupFolder(String)
    /// The folder holds the backups of another database.
    case otherDatabase(folder: String, folderDatabase: String, database: String)
    /// A segment or base copy fails its checksum, or is cut short.
    case corrupt(path: String, reason: String)
    /// The folder holds no restorable copy at all, or none as old as asked.
    case nothingToRestore(String)
    /// SQLite refused a read or a checkpoint of the database being backed up.
    case database(path: String, reason: String)

    public var description: String {
        switch self {
        case .io(let path, let operation, let code):
            "Cannot \(operation) \(path): \(String(cString: strerror(code))). Check the disk and the folder's permissions."
        case .notABackupFolder(let folder):
            "\(folder) is not a backup folder (it has no backup.json): give the folder that "
                + "`todosync serve --backup-dir` wrote."
        case .otherDatabase(let folder, let folderDatabase, let database):
            "The backup folder \(folder) holds the backups of another database (\(folderDatabase); this one is "
                + "\(database)). A restored database is a new one for backups: serve it with a new --backup-dir."
        case .corrupt(let path, let reason):
            "The backup file \(path) is damaged (\(reason)): restore to a time before it, or from another copy "
                + "of the backup folder."
        case .nothingToRestore(let reason):
            reason
        case .database(let path, let reason):
            "Cannot read \(path) for its backup: \(reason). Check the file and the disk."
        }
    }
}
