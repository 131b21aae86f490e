import Foundation

/// Replaces a small file so that, after a power cut, it holds either the old content or the new,
/// never a mix and never the old after a save was confirmed: the new content goes to a temporary
/// file in the same folder, which is synced, renamed over the file, and then the folder is synced
/// (Foundation's `.atomic` write syncs nothing after the rename, so an acknowledged save could come
/// back as the old file).
public enum DurableFile {
    /// Writes `data` to `url`, created `0600` when new.
    public static func write(_ data: Data, to url: URL) throws(DurabilityError) {
        let path = url.path
        let temporary = path + ".saving"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .syncFailed(path: temporary, errno: errno) }
        var failure = writeFully(data, to: descriptor, at: 0)
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        guard failure == 0 else {
            unlink(temporary)
            throw .syncFailed(path: temporary, errno: failure)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .syncFailed(path: path, errno: code)
        }
        let folder = url.deletingLastPathComponent().path
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .syncFailed(path: folder, errno: errno) }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw .syncFailed(path: folder, errno: errno) }
    }
}
