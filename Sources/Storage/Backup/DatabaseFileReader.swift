import Foundation
import GRDB
import GRDBSQLite

/// Reads the main database file of a connection through SQLite's own open file
/// (`SQLITE_FCNTL_FILE_POINTER`), for the backup's base copy.
///
/// Not through a descriptor of our own: closing any descriptor of a file drops every POSIX lock the
/// process holds on it, SQLite's included (see ``GroupCommit/syncFolder()``), and the service's
/// connections would go on without the locks that keep other processes and checkpoints in line.
struct DatabaseFileReader {
    private let file: UnsafeMutablePointer<sqlite3_file>
    let path: String

    /// The main database file of `db`.
    init(_ db: Database, path: String) throws(BackupError) {
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        let code = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_FILE_POINTER, &pointer)
        guard code == SQLITE_OK, let pointer, pointer.pointee.pMethods != nil else {
            throw .database(path: path, reason: "SQLite gave no handle to its file (code \(code))")
        }
        file = pointer
        self.path = path
    }

    /// The file's size in bytes.
    func size() throws(BackupError) -> Int {
        var size: sqlite3_int64 = 0
        let code = file.pointee.pMethods.pointee.xFileSize(file, &size)
        guard code == SQLITE_OK else { throw .database(path: path, reason: "its size cannot be read (code \(code))") }
        return Int(size)
    }

    /// `count` bytes from `offset` (zeros past the end, as SQLite reads a short file).
    func read(at offset: Int, count: Int) throws(BackupError) -> Data {
        var data = Data(count: count)
        let code = data.withUnsafeMutableBytes { buffer in
            file.pointee.pMethods.pointee.xRead(file, buffer.baseAddress, Int32(count), sqlite3_int64(offset))
        }
        // SQLITE_IOERR_SHORT_READ (a macro Swift does not import): past the end, the rest is zeros.
        guard code == SQLITE_OK || code == SQLITE_IOERR | (2 << 8) else {
            throw .database(path: path, reason: "it cannot be read (code \(code))")
        }
        return data
    }
}
