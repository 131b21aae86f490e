import Foundation
import GRDB

/// Ships a WAL database's committed transactions to a ``BackupFolder``, round by round: a base
/// copy when a generation begins, then each round a segment of the frames committed since.
///
/// Why this is safe (see wal.c): SQLite restarts its log (new salts, writing from frame 1 again)
/// only when a writer begins while a checkpoint has copied *every* frame into the database and no
/// reader holds a read mark above 0. The service runs with `wal_autocheckpoint = 0`, so the only
/// checkpoints are this shipper's, and each runs while its own read transaction is open (or while
/// it holds the service's writer): the checkpoint cannot copy past that snapshot, which was shipped
/// before it. So when the salts change, every frame of the old log was shipped; the shipper checks
/// it (the last checkpoint reported the whole log copied, at exactly the frames shipped), and
/// begins a new generation with a fresh base copy whenever it cannot prove it.
///
/// Not thread-safe: rounds run one after another on one thread (``ContinuousBackup``'s).
public final class WALShipper {
    /// Where the shipper is.
    enum Phase {
        /// The next round makes a base copy: no generation yet, or continuity cannot be proven.
        case needsBase(reason: String)
        case following(Position)
    }

    struct Position {
        var generation: BackupGeneration
        var pageSize: Int
        var nextSegment: Int
        /// The salts of the log being followed; nil when there was none at the base copy.
        var salts: WALSalts?
        var nextFrame: Int
        var checksum: WALChecksum?
        /// The frames of the log that the last checkpoint reported all copied, when it did.
        var fullyCopied: Int?
        var segmentBytes: Int
        var segments: Int
        var baseBytes: Int
        var startedAt: Int64
    }

    /// What one round did.
    public struct Round: Sendable {
        /// WAL frames shipped (pages changed more than once count each time).
        public var frames = 0
        /// The segment written, if any.
        public var segment: Int?
        /// The generation begun, if any, and why.
        public var newGeneration: (name: String, reason: String)?
        /// The time written on the segment.
        public var committedAt: Int64?
    }

    public let databasePath: String
    public let folder: BackupFolder
    private let walPath: String
    private let reader: DatabaseQueue
    private let checkpointer: DatabaseQueue
    private let newBaseAfter: Int64
    private var phase: Phase = .needsBase(reason: "the service started")

    /// A shipper of the database at `databasePath` (open in WAL mode by its service) into `folder`;
    /// a new base copy is made at the first round and after `newBaseAfter` ms (or once the
    /// segments outweigh the base copy).
    public init(databasePath: String, folder: BackupFolder, newBaseAfter: Int64) throws(BackupError) {
        self.databasePath = databasePath
        walPath = databasePath + "-wal"
        self.folder = folder
        self.newBaseAfter = newBaseAfter
        do {
            var readOnly = Configuration()
            readOnly.readonly = true
            readOnly.busyMode = .timeout(10)
            reader = try DatabaseQueue(path: databasePath, configuration: readOnly)
            var checkpoints = Configuration()
            checkpoints.busyMode = .timeout(10)
            checkpointer = try DatabaseQueue(path: databasePath, configuration: checkpoints)
        } catch {
            throw .database(path: databasePath, reason: "\(error)")
        }
    }

    /// Frames of the current log shipped so far (the log's live length, as far as the shipper knows).
    public var framesInLog: Int {
        if case .following(let position) = phase { return position.nextFrame - 1 }
        return 0
    }

    /// The page size of the database being shipped (4096 until known).
    public var pageSize: Int {
        if case .following(let position) = phase { return position.pageSize }
        return 4096
    }

    /// Whether the last checkpoint copied the whole log (so the next write restarts it).
    public var logFullyCopied: Bool {
        if case .following(let position) = phase { return position.fullyCopied == position.nextFrame - 1 }
        return false
    }

    /// One round with the reader's snapshot pinned: ships what was committed, then, when asked,
    /// checkpoints up to it (a checkpoint syncs the log and the database: not every round).
    public func ship(checkpoint: Bool = false, now: () -> Int64) throws(BackupError) -> Round {
        do {
            return try reader.read { db in
                // The snapshot (and its read mark) is taken at the first read.
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                let round = try self.round(db, now: now)
                if checkpoint {
                    try self.checkpoint { body in try self.checkpointer.writeWithoutTransaction(body) }
                }
                return round
            }
        } catch let error as BackupError {
            throw error
        } catch {
            throw .database(path: databasePath, reason: "\(error)")
        }
    }

    /// One round on the service's writer connection (`writer`, outside any transaction): no write
    /// can begin meanwhile, so everything is shipped and the checkpoint may copy the whole log,
    /// which lets the next write restart it (under a steady load a pinned round never can).
    public func shipHoldingWriter(_ writer: Database, now: () -> Int64) throws(BackupError) -> Round {
        do {
            let round = try self.round(writer, now: now)
            try checkpoint { body in try body(writer) }
            return round
        } catch let error as BackupError {
            throw error
        } catch {
            throw .database(path: databasePath, reason: "\(error)")
        }
    }

    /// Begins a new generation at the next round (after a ``ship(now:)`` that failed, say).
    public func restartGeneration(reason: String) {
        phase = .needsBase(reason: reason)
    }

    /// One round; `db` is a connection to the database (for the base copy), in the snapshot held.
    private func round(_ db: Database, now: () -> Int64) throws -> Round {
        if case .following(let position) = phase {
            let time = now()
            if time - position.startedAt >= newBaseAfter || position.segments >= 100_000
                || position.segmentBytes > max(position.baseBytes, 64 << 20)
            {
                phase = .needsBase(reason: "a fresh base copy keeps restores short and lets old segments go")
            }
        }
        switch phase {
        case .needsBase(let reason):
            return try startGeneration(db, now: now, reason: reason)
        case .following(var position):
            guard let header = try WALReader.header(path: walPath) else { return Round() }
            if header.pageSize != position.pageSize {
                return try startGeneration(db, now: now, reason: "the page size changed")
            }
            if header.salts != position.salts {
                if position.salts != nil, position.fullyCopied != position.nextFrame - 1 {
                    return try startGeneration(
                        db, now: now, reason: "the log restarted past frames that may not have been shipped")
                }
                position.salts = header.salts
                position.nextFrame = 1
                position.checksum = nil
                position.fullyCopied = nil
            }
            let tail = try WALReader.tail(
                path: walPath, header: header, from: position.nextFrame, checksum: position.checksum)
            var round = Round()
            if !tail.frames.isEmpty {
                let time = now()
                let segment = BackupSegment(
                    index: position.nextSegment, committedAt: time, pageSize: header.pageSize, frames: tail.frames)
                position.segmentBytes += try position.generation.write(segment)
                round = Round(frames: tail.frames.count, segment: position.nextSegment, committedAt: time)
                position.nextSegment += 1
                position.segments += 1
            }
            position.nextFrame = tail.nextFrame
            position.checksum = tail.checksum
            phase = .following(position)
            return round
        }
    }

    /// A base copy of the database file, page for page, and the whole log after it as segment 1.
    /// The caller holds a snapshot (or the writer): no checkpoint copies frames it has not shipped.
    private func startGeneration(_ db: Database, now: () -> Int64, reason: String) throws -> Round {
        let generation = try folder.newGeneration(now: now())
        let header = try WALReader.header(path: walPath)
        let pageSize = try header?.pageSize ?? Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        let (bytes, crc) = try copyBase(db, to: generation.basePath)
        let tail = try header.map { try WALReader.tail(path: walPath, header: $0, from: 1, checksum: nil) }
        let time = now()
        let segment = BackupSegment(index: 1, committedAt: time, pageSize: pageSize, frames: tail?.frames ?? [])
        let segmentBytes = try generation.write(segment)
        try generation.writeManifest(
            GenerationManifest(pageSize: pageSize, baseBytes: bytes, baseCRC32: crc, createdAt: time))
        phase = .following(
            Position(
                generation: generation, pageSize: pageSize, nextSegment: 2, salts: header?.salts,
                nextFrame: tail?.nextFrame ?? 1, checksum: tail?.checksum, fullyCopied: nil,
                segmentBytes: segmentBytes, segments: 1, baseBytes: bytes, startedAt: time))
        return Round(
            frames: tail?.frames.count ?? 0, segment: 1, newGeneration: (generation.name, reason), committedAt: time)
    }

    /// Runs a PASSIVE checkpoint through `connection` and notes whether it copied the whole log,
    /// at exactly the frames shipped: the proof that a restart of the log loses nothing. The proof
    /// holds until the next checkpoint (only these copy frames), as long as no frame is shipped
    /// after it: a restart needs every frame copied first.
    private func checkpoint(_ connection: ((Database) throws -> Void) throws -> Void) throws {
        var log = -1
        var copied = -1
        try connection { db in
            if let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") {
                log = row[1] ?? -1
                copied = row[2] ?? -1
            }
        }
        guard case .following(var position) = phase else { return }
        position.fullyCopied = log >= 0 && log == copied && log == position.nextFrame - 1 ? log : nil
        phase = .following(position)
    }

    /// Copies the database file as it is (pages a concurrent checkpoint is writing are written
    /// again by segment 1, which holds every frame it copies from).
    ///
    /// Not `VACUUM INTO` (it renumbers pages, which the frames name) nor the backup API (its
    /// snapshot would not be the one whose log is shipped).
    private func copyBase(_ db: Database, to path: String) throws -> (bytes: Int, crc: UInt32) {
        try DurableWrite.copy(try DatabaseFileReader(db, path: databasePath), to: path)
    }
}
