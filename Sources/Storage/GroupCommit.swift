import Foundation

/// Makes the commits of a WAL database durable before they are acknowledged, sharing one sync of
/// the write-ahead log among every commit that waits for it (group commit).
///
/// The database runs `synchronous = NORMAL`: a commit appends its frames to the WAL without waiting
/// for the disk. A writer that is about to acknowledge takes a ``Ticket`` right after its commit and
/// waits in ``waitUntilDurable(_:)`` until a sync of the WAL that *began after* that commit has
/// finished. One waiter runs the sync (`fdatasync`) while the others wait; commits that arrive
/// meanwhile — the write lock is free during the sync — are covered by the next one. So under load a
/// sync serves many commits, and alone a commit costs one sync, as PostgreSQL's group commit does.
///
/// Readers may see a commit a moment before it is durable (SQLite publishes it at commit); only the
/// writer's acknowledgement waits. A sync that fails (EIO: the disk refused) poisons the object:
/// every waiter and every later write is refused with ``DurabilityError``, since the kernel may have
/// dropped the pages it could not write and nothing can be promised until the service restarts.
///
/// Written here rather than taken from a library: GRDB syncs only through SQLite's own `synchronous`
/// setting, which syncs while the write lock is held (one sync per commit, commits in a line).
// @unchecked Sendable: `state` is read and written only while `condition` is locked.
public final class GroupCommit: @unchecked Sendable {
    /// A commit's place in line: durable once a sync that began after it has finished.
    public struct Ticket: Sendable, Comparable {
        let number: UInt64
        public static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.number < rhs.number }
    }

    /// Where the syncs stand, under ``condition``.
    private struct State {
        /// Commits taken a ticket for.
        var committed: UInt64 = 0
        /// Every commit up to this one is durable.
        var durable: UInt64 = 0
        /// A sync is under way.
        var syncing = false
        /// The WAL file, opened on the first sync (and again when SQLite made a new one).
        var wal: OpenFile?
        /// The sync that failed, when one did: nothing is acknowledged after it.
        var failure: DurabilityError?
        /// How many syncs ran (for benchmarks: syncs per acknowledged write).
        var syncs = 0
    }

    private struct OpenFile {
        var descriptor: CInt
        var inode: UInt64
    }

    /// The database file whose WAL is synced.
    public let databasePath: String
    private let walPath: String
    private let folderPath: String
    /// Syncs one file's data (`fdatasync`): returns 0, or the `errno` of the failure.
    private let syncFile: @Sendable (CInt) -> CInt
    // NSCondition: waiters block on the writer's own thread (the service's request threads, which
    // already block on SQLite's write lock), with no task or queue hop per acknowledgement.
    private let condition = NSCondition()
    private var state = State()

    /// Group commits for the WAL database at `databasePath`. `syncFile` is `fdatasync` but for tests
    /// that make the disk refuse.
    public init(databasePath: String, syncFile: @escaping @Sendable (CInt) -> CInt = GroupCommit.fdatasync) {
        self.databasePath = databasePath
        walPath = databasePath + "-wal"
        folderPath = URL(fileURLWithPath: databasePath).deletingLastPathComponent().path
        self.syncFile = syncFile
    }

    deinit {
        if let wal = state.wal { close(wal.descriptor) }
    }

    /// `fdatasync(2)`: 0, or the `errno` of its failure.
    public static let fdatasync: @Sendable (CInt) -> CInt = { descriptor in
        Glibc.fdatasync(descriptor) == 0 ? 0 : errno
    }

    /// How many syncs have run.
    public var syncCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return state.syncs
    }

    /// Throws the failure of an earlier sync, if one failed: call before writing, so that nothing is
    /// written that cannot be acknowledged.
    public func checkHealthy() throws(DurabilityError) {
        condition.lock()
        defer { condition.unlock() }
        if let failure = state.failure { throw failure }
    }

    /// A ticket for the transaction that just committed. Take it after the commit returned.
    public func committed() -> Ticket {
        condition.lock()
        defer { condition.unlock() }
        state.committed += 1
        return Ticket(number: state.committed)
    }

    /// Blocks until the commit of `ticket` is on disk: runs a sync of the WAL when none is under way,
    /// or waits for the one under way and, when that began too early, the next.
    public func waitUntilDurable(_ ticket: Ticket) throws(DurabilityError) {
        condition.lock()
        defer { condition.unlock() }
        while state.durable < ticket.number {
            if let failure = state.failure { throw failure }
            guard !state.syncing else {
                condition.wait()
                continue
            }
            state.syncing = true
            let target = state.committed
            let wal = state.wal
            condition.unlock()
            let outcome = Result(catching: { () throws(DurabilityError) in try sync(wal) })
            condition.lock()
            state.syncing = false
            state.syncs += 1
            switch outcome {
            case .success(let file):
                state.wal = file
                state.durable = max(state.durable, target)
            case .failure(let error):
                state.failure = error
            }
            condition.broadcast()
        }
    }

    /// Makes every commit so far durable: ``committed()`` then ``waitUntilDurable(_:)``.
    public func syncNow() throws(DurabilityError) {
        try waitUntilDurable(committed())
    }

    /// Syncs the WAL through `file`, or through a new descriptor when there is none or SQLite
    /// replaced the file (a new WAL's name is made durable too: its folder is synced once).
    private func sync(_ file: OpenFile?) throws(DurabilityError) -> OpenFile? {
        var current = file
        var status = stat()
        let exists = stat(walPath, &status) == 0
        if let open = current, !exists || UInt64(status.st_ino) != open.inode {
            // Safe to close: SQLite holds no lock on the WAL (its locks are on the database and -shm).
            close(open.descriptor)
            current = nil
        }
        var isNew = false
        if current == nil, exists {
            let descriptor = open(walPath, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .syncFailed(path: walPath, errno: errno) }
            current = OpenFile(descriptor: descriptor, inode: UInt64(status.st_ino))
            isNew = true
        }
        guard let current else {
            // No WAL: every commit is in the database file already (checkpointed and synced by SQLite).
            return nil
        }
        let code = syncFile(current.descriptor)
        guard code == 0 else { throw .syncFailed(path: walPath, errno: code) }
        if isNew { try syncFolder() }
        return current
    }

    /// Syncs the folder, so that the files created in it (the database, its WAL) survive a power cut.
    ///
    /// Never the database file itself: closing any descriptor of a file drops every POSIX lock the
    /// process holds on it, SQLite's included, and another process could then take the database for
    /// its own (and delete the WAL under us). SQLite syncs the database file itself (its first header,
    /// and after each checkpoint); the WAL holds everything else.
    public func syncFolder() throws(DurabilityError) {
        try sync(path: folderPath, flags: O_RDONLY | O_DIRECTORY)
    }

    private func sync(path: String, flags: CInt) throws(DurabilityError) {
        let descriptor = open(path, flags | O_CLOEXEC)
        guard descriptor >= 0 else { throw .syncFailed(path: path, errno: errno) }
        defer { close(descriptor) }
        let code = syncFile(descriptor)
        guard code == 0 else { throw .syncFailed(path: path, errno: code) }
    }
}

/// Why a commit could not be made durable.
public enum DurabilityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The disk refused to sync the file (`errno`): what was written may not be on it.
    case syncFailed(path: String, errno: CInt)

    public var description: String {
        switch self {
        case .syncFailed(let path, let code):
            "The disk refused to save \(path) (\(String(cString: strerror(code)))): changes since the last "
                + "successful save may be lost, and none is confirmed until the program restarts. Check the disk "
                + "(space, errors in the system log), then restart."
        }
    }
}
