import Foundation

/// What a backup folder can restore: its generations that have a base copy and segment 1, each
/// covering from its first segment's time to the next one's.
public struct BackupCatalog: Sendable {
    public struct Generation: Sendable {
        public let generation: BackupGeneration
        public let manifest: GenerationManifest
        public let segments: [SegmentEntry]

        /// When its base copy (with segment 1) was made.
        public var beganAt: Int64 { segments[0].committedAt }
        /// The newest commit it holds.
        public var newestCommitAt: Int64 { segments[segments.count - 1].committedAt }
    }

    public let folder: BackupFolder
    /// The database the folder belongs to.
    public let database: String
    public let generations: [Generation]

    /// Reads the folder's catalog: throws when it is no backup folder or holds nothing to restore.
    public init(folder: BackupFolder) throws(BackupError) {
        self.folder = folder
        database = try folder.database()
        var generations: [Generation] = []
        for generation in try folder.generations() {
            let segments = try generation.segments()
            guard segments.first?.index == 1 else { continue }
            generations.append(
                Generation(generation: generation, manifest: try generation.manifest(), segments: segments))
        }
        guard !generations.isEmpty else {
            throw .nothingToRestore(
                "The backup folder \(folder.path) holds no finished base copy yet: nothing to restore.")
        }
        self.generations = generations
    }

    /// The time of the oldest state that can be restored.
    public var oldest: Int64 { generations[0].beganAt }
    /// The time of the newest commit shipped.
    public var newest: Int64 { generations[generations.count - 1].newestCommitAt }

    /// The generation that restores `time`: the newest one begun by then.
    public func generation(for time: Int64) -> Generation? {
        generations.last { $0.beganAt <= time }
    }
}

/// Builds a database file from a backup: the base copy, then each segment's pages in order.
public enum RestoreBuilder {
    /// What a build holds.
    public struct Built: Sendable {
        /// The time of the newest segment applied: every commit shipped by then is in the file.
        public let committedAt: Int64
        public let segments: Int
    }

    /// Writes to `path` (replaced) the database as of `time` (the newest state for `nil`): the
    /// generation begun by then and its segments up to it, each checked whole. The file is synced.
    public static func build(
        _ catalog: BackupCatalog, at time: Int64?, into path: String
    ) throws(BackupError) -> Built {
        guard let generation = time.map({ catalog.generation(for: $0) }) ?? catalog.generations.last else {
            throw .nothingToRestore("No base copy is as old as asked.")
        }
        let pageSize = generation.manifest.pageSize
        unlink(path)
        let pending = try DurableWrite.Pending(temporary: path)
        guard let base = try ReadOnlyFile(path: generation.generation.basePath) else {
            throw .corrupt(path: generation.generation.basePath, reason: "missing")
        }
        try pending.append(contentsOf: base)
        guard pending.bytes == generation.manifest.baseBytes, pending.crc.value == generation.manifest.baseCRC32 else {
            pending.abandon()
            throw .corrupt(path: generation.generation.basePath, reason: "its size or checksum is not the one recorded")
        }
        var pages = UInt32(pending.bytes / pageSize)
        var applied = 0
        var newest = generation.beganAt
        let output = open(path, O_WRONLY | O_CLOEXEC)
        guard output >= 0 else { throw .io(path: path, operation: "open", errno: errno) }
        defer { close(output) }
        for (position, entry) in generation.segments.enumerated() {
            if let time, entry.committedAt > time { break }
            guard entry.index == position + 1 else {
                throw .corrupt(path: entry.path, reason: "segment \(position + 1) before it is missing")
            }
            guard let file = try ReadOnlyFile(path: entry.path) else {
                throw .corrupt(path: entry.path, reason: "missing")
            }
            let segment = try BackupSegment.decode(try file.read(at: 0, count: try file.size()), path: entry.path)
            guard segment.index == entry.index, segment.pageSize == pageSize else {
                throw .corrupt(path: entry.path, reason: "it belongs to another place in the backup")
            }
            for page in segment.pages {
                try write(page.bytes, at: (Int(page.number) - 1) * pageSize, to: output, path: path)
            }
            if segment.databasePages != 0 { pages = segment.databasePages }
            applied += 1
            newest = entry.committedAt
        }
        guard ftruncate(output, off_t(Int(pages) * pageSize)) == 0 else {
            throw .io(path: path, operation: "truncate", errno: errno)
        }
        guard fsync(output) == 0 else { throw .io(path: path, operation: "sync", errno: errno) }
        return Built(committedAt: newest, segments: applied)
    }

    private static func write(_ data: Data, at offset: Int, to descriptor: CInt, path: String) throws(BackupError) {
        let failure = writeFully(data, to: descriptor, at: offset)
        guard failure == 0 else { throw .io(path: path, operation: "write", errno: failure) }
    }
}
