import Foundation

/// A file opened for reading with `pread`, closed when the value goes.
final class ReadOnlyFile {
    let path: String
    private let descriptor: CInt

    /// The file at `path`, or nil when there is none.
    init?(path: String) throws(BackupError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw .io(path: path, operation: "open", errno: errno)
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func size() throws(BackupError) -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io(path: path, operation: "read", errno: errno) }
        return Int(status.st_size)
    }

    /// Up to `count` bytes from `offset` (fewer at the end of the file).
    func read(at offset: Int, count: Int) throws(BackupError) -> Data {
        var data = Data(count: count)
        var done = 0
        var failure: CInt = 0
        data.withUnsafeMutableBytes { buffer in
            while done < count {
                let got = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                done += got
            }
        }
        guard failure == 0 else { throw .io(path: path, operation: "read", errno: failure) }
        if done < count { data.removeSubrange(done..<count) }
        return data
    }
}

/// Writes files of the backup so that a power cut leaves each either absent or whole: written to
/// a temporary name, synced, renamed, and the folder synced.
public enum DurableWrite {
    /// A file being written: append to it, then ``finish(as:)``.
    final class Pending {
        let temporary: String
        private let descriptor: CInt
        private(set) var crc = CRC32()
        private(set) var bytes = 0

        init(temporary: String) throws(BackupError) {
            self.temporary = temporary
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw .io(path: temporary, operation: "create", errno: errno) }
        }

        deinit { close(descriptor) }

        func append(_ data: Data) throws(BackupError) {
            let failure = writeFully(data, to: descriptor, at: bytes)
            guard failure == 0 else { throw .io(path: temporary, operation: "write", errno: failure) }
            crc.update(data)
            bytes += data.count
        }

        /// Appends the whole of `source`, 4 MiB at a time.
        func append(contentsOf source: some PositionalFile) throws(BackupError) {
            let size = try source.size()
            var offset = 0
            while offset < size {
                let chunk = try source.read(at: offset, count: min(4 << 20, size - offset))
                if chunk.isEmpty { break }
                try append(chunk)
                offset += chunk.count
            }
        }

        /// Syncs the file, renames it to `path` and syncs the folder.
        func finish(as path: String) throws(BackupError) {
            guard fsync(descriptor) == 0 else { throw .io(path: temporary, operation: "sync", errno: errno) }
            guard rename(temporary, path) == 0 else { throw .io(path: path, operation: "rename", errno: errno) }
            try DurableWrite.syncFolder(of: path)
        }

        func abandon() { unlink(temporary) }
    }

    /// Writes `data` to `path` durably.
    static func write(_ data: Data, to path: String) throws(BackupError) {
        let pending = try Pending(temporary: path + ".tmp")
        do {
            try pending.append(data)
            try pending.finish(as: path)
        } catch {
            pending.abandon()
            throw error
        }
    }

    /// Copies the file at `source` to `destination` durably (for a filesystem without hard links).
    public static func copy(from source: String, to destination: String) throws(BackupError) {
        guard let file = try ReadOnlyFile(path: source) else {
            throw .io(path: source, operation: "open", errno: ENOENT)
        }
        try copy(file, to: destination)
    }

    /// Copies `source` to `path` durably: the bytes written and their CRC-32.
    @discardableResult
    static func copy(_ source: some PositionalFile, to path: String) throws(BackupError) -> (bytes: Int, crc: UInt32) {
        let pending = try Pending(temporary: path + ".tmp")
        do {
            try pending.append(contentsOf: source)
            try pending.finish(as: path)
        } catch {
            pending.abandon()
            throw error
        }
        return (pending.bytes, pending.crc.value)
    }

    /// Syncs the folder holding `path`, so that a name created or renamed in it survives a power cut.
    public static func syncFolder(of path: String) throws(BackupError) {
        try syncFolder(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    static func syncFolder(_ folder: String) throws(BackupError) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(path: folder, operation: "open", errno: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .io(path: folder, operation: "sync", errno: errno) }
    }

    /// Creates `folder` (and its parents) readable by its owner only, its name made durable.
    static func makeFolder(_ folder: String) throws(BackupError) {
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io(path: folder, operation: "create the folder", errno: EACCES)
        }
        try syncFolder(folder)
        try syncFolder(of: folder)
    }
}
