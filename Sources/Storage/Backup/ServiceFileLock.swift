import Foundation

/// A lock that a service holds on its SQLite file for as long as it runs (`FILE.lock`, `flock`),
/// so that `todosync restore` refuses to replace the file under it. Released when the process
/// ends, however it ends.
///
/// A file of its own, not the database: closing any descriptor of the database would drop the
/// POSIX locks SQLite holds on it.
public final class ServiceFileLock: Sendable {
    public let path: String
    private let descriptor: CInt

    /// Takes the lock of the database at `databasePath`; throws when another process (or another
    /// open of it here) holds it.
    public init(databasePath: String) throws(ServiceFileLockError) {
        path = databasePath + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines)
            close(descriptor)
            throw .held(database: databasePath, by: holder ?? "")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// Why a ``ServiceFileLock`` was not taken.
public enum ServiceFileLockError: Error, Sendable, CustomStringConvertible {
    case held(database: String, by: String)
    case cannotOpen(path: String, errno: CInt)

    public var description: String {
        switch self {
        case .held(let database, let holder):
            "A service is running on \(database)" + (holder.isEmpty ? "" : " (process \(holder))")
                + ": stop it first (Ctrl-C or SIGTERM), then try again."
        case .cannotOpen(let path, let code):
            "Cannot open \(path): \(String(cString: strerror(code))). Check the folder's permissions."
        }
    }
}
