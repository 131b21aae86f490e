import Foundation

/// A file the backup reads by offset: a file of its own (``ReadOnlyFile``), or the database file
/// through SQLite's handle (``DatabaseFileReader``).
protocol PositionalFile {
    /// The file's size in bytes.
    func size() throws(BackupError) -> Int
    /// Up to `count` bytes from `offset`.
    func read(at offset: Int, count: Int) throws(BackupError) -> Data
}

extension ReadOnlyFile: PositionalFile {}
extension DatabaseFileReader: PositionalFile {}
