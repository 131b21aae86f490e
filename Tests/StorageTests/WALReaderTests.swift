import Foundation
import GRDB
import TestSupport
import Testing

@testable import Storage

/// The WAL reader on real write-ahead logs: whole transactions only, and nothing past a frame that
/// fails its checksum.
@Suite("WAL reader")
struct WALReaderTests {
    /// A WAL database that never checkpoints by itself, with `transactions` one-row commits.
    static func database(_ folder: TemporaryFolder, transactions: Int) throws -> (DatabaseQueue, String) {
        let path = folder.file("log.sqlite")
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT)")
        }
        for number in 0..<transactions {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO t (text) VALUES (?)", arguments: ["row \(number)"])
            }
        }
        return (queue, path + "-wal")
    }

    @Test func everyCommittedFrameIsReadAndEndsOnACommit() throws {
        let folder = try TemporaryFolder()
        let (queue, wal) = try Self.database(folder, transactions: 5)
        let header = try #require(try WALReader.header(path: wal))
        let tail = try WALReader.tail(path: wal, header: header, from: 1, checksum: nil)
        #expect(tail.frames.count >= 6)
        #expect(tail.frames.last?.databasePages != 0)
        #expect(tail.nextFrame == tail.frames.count + 1)
        // Reading on from there finds nothing new; one more commit is found alone.
        #expect(
            try WALReader.tail(path: wal, header: header, from: tail.nextFrame, checksum: tail.checksum).frames.isEmpty)
        try queue.write { db in try db.execute(sql: "INSERT INTO t (text) VALUES ('one more')") }
        let more = try WALReader.tail(path: wal, header: header, from: tail.nextFrame, checksum: tail.checksum)
        #expect(!more.frames.isEmpty && more.frames.last?.databasePages != 0)
        try queue.close()
    }

    @Test func aDamagedFrameEndsTheReadingAtTheCommitBeforeIt() throws {
        let folder = try TemporaryFolder()
        let (queue, log) = try Self.database(folder, transactions: 3)
        // A copy of the log, damaged: the database keeps its own.
        let wal = folder.file("copy-wal")
        try FileManager.default.copyItem(atPath: log, toPath: wal)
        let header = try #require(try WALReader.header(path: wal))
        let whole = try WALReader.tail(path: wal, header: header, from: 1, checksum: nil)
        // Damage the last frame's page: its transaction is no longer complete.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: wal))
        let last = header.offset(ofFrame: whole.frames.count) + WALHeader.frameHeaderSize + 100
        bytes[last] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: wal))
        let cut = try WALReader.tail(path: wal, header: header, from: 1, checksum: nil)
        #expect(cut.frames.count < whole.frames.count)
        #expect(cut.frames.last?.databasePages != 0)
        try queue.close()
    }
}
