import Foundation

/// A backup folder (`--backup-dir`): `backup.json` naming the database it belongs to, and one
/// folder per generation, oldest first by name, each a base copy (`base.sqlite`, described by
/// `generation.json`) and the segments shipped after it (`NNNNNNNNNN-TIME.segment`).
public struct BackupFolder: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    struct Identity: Codable {
        var format = 1
        var database: String
        var createdAt: Int64
    }

    var identityPath: String { path + "/backup.json" }

    /// The identity of the database whose backups the folder holds.
    public func database() throws(BackupError) -> String {
        guard let file = try ReadOnlyFile(path: identityPath) else { throw .notABackupFolder(path) }
        let data = try file.read(at: 0, count: try file.size())
        guard let identity = try? JSONDecoder().decode(Identity.self, from: data) else {
            throw .corrupt(path: identityPath, reason: "not the JSON todosync writes")
        }
        return identity.database
    }

    /// Makes the folder the backup folder of `database`: creates it and `backup.json` when new,
    /// refuses one that holds another database's backups (or other files).
    public func claim(for database: String, now: Int64) throws(BackupError) {
        if FileManager.default.fileExists(atPath: identityPath) {
            let owner = try self.database()
            guard owner == database else {
                throw .otherDatabase(folder: path, folderDatabase: owner, database: database)
            }
            return
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard entries.isEmpty else { throw .notABackupFolder(path + " (it holds other files; give an empty folder)") }
        try DurableWrite.makeFolder(path)
        let data = (try? JSONEncoder().encode(Identity(database: database, createdAt: now))) ?? Data()
        try DurableWrite.write(data, to: identityPath)
    }

    /// The generations, oldest first; those whose base copy was not finished (a power cut) are left out.
    public func generations() throws(BackupError) -> [BackupGeneration] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            throw .notABackupFolder(path)
        }
        return names.filter { $0.hasPrefix("generation-") }.sorted().map {
            BackupGeneration(name: $0, path: path + "/" + $0)
        }.filter { FileManager.default.fileExists(atPath: $0.manifestPath) }
    }

    /// A new generation's folder, named after `now` (or 1 ms past the newest one, when the clock
    /// is not past it) so that names sort in the order generations began.
    func newGeneration(now: Int64) throws(BackupError) -> BackupGeneration {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let newest = names.compactMap { name -> Int64? in
            let parts = name.split(separator: "-")
            return parts.count == 3 && parts[0] == "generation" ? Int64(parts[1]) : nil
        }.max()
        let time = newest.map { max(now, $0 + 1) } ?? now
        let random = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        let name = "generation-" + String(format: "%015lld", time) + "-" + random
        let generation = BackupGeneration(name: name, path: path + "/" + name)
        try DurableWrite.makeFolder(generation.path)
        return generation
    }

    /// Removes the generations no longer needed to restore to any time since `now - keep`: each one
    /// whose successor began before then, and unfinished ones older than the newest finished one.
    /// Returns the names removed.
    @discardableResult
    public func prune(keep: Int64, now: Int64) throws(BackupError) -> [String] {
        let all: [String]
        do {
            all = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("generation-") }
                .sorted()
        } catch { return [] }
        let finished = try generations()
        var remove: [String] = []
        for (position, generation) in finished.enumerated().dropLast() {
            let next = finished[position + 1]
            if let began = try next.segments().first?.committedAt, began < now - keep { remove.append(generation.name) }
        }
        if let newest = finished.last?.name {
            remove += all.filter { $0 < newest && !finished.map(\.name).contains($0) }
        }
        for name in remove { try? FileManager.default.removeItem(atPath: path + "/" + name) }
        if !remove.isEmpty { try DurableWrite.syncFolder(path) }
        return remove
    }
}

/// What `generation.json` says of a generation's base copy.
public struct GenerationManifest: Codable, Sendable {
    var format = 1
    public var pageSize: Int
    public var baseBytes: Int
    public var baseCRC32: UInt32
    public var createdAt: Int64
}

/// One shipped segment, as its file's name tells.
public struct SegmentEntry: Sendable {
    public let index: Int
    public let committedAt: Int64
    public let path: String
}

/// One generation of a backup: a base copy and the segments shipped after it, without a gap.
public struct BackupGeneration: Sendable {
    public let name: String
    public let path: String

    var basePath: String { path + "/base.sqlite" }
    var manifestPath: String { path + "/generation.json" }

    public func manifest() throws(BackupError) -> GenerationManifest {
        guard let file = try ReadOnlyFile(path: manifestPath) else {
            throw .corrupt(path: manifestPath, reason: "missing")
        }
        guard
            let manifest = try? JSONDecoder().decode(
                GenerationManifest.self, from: file.read(at: 0, count: file.size()))
        else { throw .corrupt(path: manifestPath, reason: "not the JSON todosync writes") }
        return manifest
    }

    /// The segments, by index.
    public func segments() throws(BackupError) -> [SegmentEntry] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            throw .io(path: path, operation: "list", errno: EIO)
        }
        return names.compactMap { name -> SegmentEntry? in
            guard name.hasSuffix(".segment") else { return nil }
            let parts = name.dropLast(".segment".count).split(separator: "-")
            guard parts.count == 2, let index = Int(parts[0]), let time = Int64(parts[1]) else { return nil }
            return SegmentEntry(index: index, committedAt: time, path: path + "/" + name)
        }.sorted { $0.index < $1.index }
    }

    func segmentPath(index: Int, committedAt: Int64) -> String {
        path + "/" + String(format: "%010d", index) + "-" + String(committedAt) + ".segment"
    }

    func write(_ segment: BackupSegment) throws(BackupError) -> Int {
        let data = segment.encoded()
        try DurableWrite.write(data, to: segmentPath(index: segment.index, committedAt: segment.committedAt))
        return data.count
    }

    func writeManifest(_ manifest: GenerationManifest) throws(BackupError) {
        let data = (try? JSONEncoder().encode(manifest)) ?? Data()
        try DurableWrite.write(data, to: manifestPath)
    }
}
