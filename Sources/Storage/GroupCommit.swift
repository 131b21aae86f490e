import Foundation
import Synchronization

/// Makes the commits of a WAL database durable before they are acknowledged, sharing one sync of
/// the write-ahead log among every commit that waits for it (group commit).
///
/// The database runs `synchronous = NORMAL`: a commit appends its frames to the WAL without waiting
/// for the disk. A writer that is about to acknowledge takes a ``Ticket`` right after its commit and
/// awaits ``waitUntilDurable(_:)``, which suspends it (the service's request thread is free to take
/// the next request) until a sync of the WAL that *began after* that commit has finished. One thread
/// of its own runs the syncs (`fdatasync`), one after another, each covering every commit made
/// before it began: so under load one sync serves many commits, and alone a commit costs one sync,
/// as PostgreSQL's group commit does.
///
/// Readers may see a commit a moment before it is durable (SQLite publishes it at commit); only the
/// writer's acknowledgement waits. A sync that fails (EIO: the disk refused) poisons the object:
/// every waiter and every later write is refused with ``DurabilityError``, since the kernel may have
/// dropped the pages it could not write and nothing can be promised until the service restarts.
///
/// Written here rather than taken from a library: GRDB syncs only through SQLite's own `synchronous`
/// setting, which syncs while the write lock is held (one sync per commit, commits in a line).
public final class GroupCommit: Sendable {
    /// A commit's place in line: durable once a sync that began after it has finished.
    public struct Ticket: Sendable, Comparable {
        let number: UInt64
        public static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.number < rhs.number }
    }

    private let syncer: Syncer

    /// Group commits for the WAL database at `databasePath`. `syncFile` is `fdatasync` but for tests
    /// that hold a sync or make the disk refuse.
    public init(databasePath: String, syncFile: @escaping @Sendable (CInt) -> CInt = GroupCommit.fdatasync) {
        syncer = Syncer(databasePath: databasePath, syncFile: syncFile)
    }

    deinit { syncer.stop() }

    /// `fdatasync(2)`: 0, or the `errno` of its failure.
    public static let fdatasync: @Sendable (CInt) -> CInt = { descriptor in
        Glibc.fdatasync(descriptor) == 0 ? 0 : errno
    }

    /// How many syncs have run.
    public var syncCount: Int { syncer.locked { $0.syncs } }

    /// Throws the failure of an earlier sync, if one failed: call before writing, so that nothing is
    /// written that cannot be acknowledged.
    public func checkHealthy() throws(DurabilityError) {
        if let failure = syncer.locked({ $0.failure }) { throw failure }
    }

    /// A write transaction is about to start (it may wait for the write lock first): a sync about to
    /// start waits a moment for it, so that one sync covers it too. End it with ``committed()`` or
    /// ``abandoned()``.
    public func beginning() {
        syncer.locked { $0.writing += 1 }
    }

    /// Write transactions begun (``beginning()``) and not yet committed or abandoned: those waiting
    /// for the write lock and the one holding it.
    public var writesUnderWay: Int { syncer.locked { $0.writing } }

    /// The transaction begun with ``beginning()`` failed or rolled back: nothing to wait for.
    public func abandoned() {
        syncer.locked { $0.writing -= 1 }
        syncer.wake()
    }

    /// A ticket for the transaction that just committed. Take it after the commit returned.
    public func committed() -> Ticket {
        let ticket = syncer.locked { state in
            state.writing = max(0, state.writing - 1)
            state.committed += 1
            return Ticket(number: state.committed)
        }
        syncer.wake()
        return ticket
    }

    /// Returns once the commit of `ticket` is on disk, suspending meanwhile.
    public func waitUntilDurable(_ ticket: Ticket) async throws(DurabilityError) {
        let outcome = await withCheckedContinuation { continuation in
            syncer.wait(for: ticket.number) { continuation.resume(returning: $0) }
        }
        try outcome.get()
    }

    /// Makes every commit so far durable, blocking the calling thread (for opening a store, outside
    /// any task).
    public func syncNow() throws(DurabilityError) {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, DurabilityError>>(.success(()))
        syncer.wait(for: committed().number) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }.get()
    }

    /// Syncs the folder, so that the files created in it (the database, its WAL) survive a power cut.
    ///
    /// Never the database file itself: closing any descriptor of a file drops every POSIX lock the
    /// process holds on it, SQLite's included, and another process could then take the database for
    /// its own (and delete the WAL under us). SQLite syncs the database file itself (its first header,
    /// and after each checkpoint); the WAL holds everything else.
    public func syncFolder() throws(DurabilityError) {
        try syncer.syncFolder()
    }
}

/// The state of a ``GroupCommit`` and the thread that runs its syncs.
// @unchecked Sendable: `state` is read and written only while `condition` is locked.
private final class Syncer: @unchecked Sendable {
    struct State {
        /// Commits taken a ticket for.
        var committed: UInt64 = 0
        /// Every commit up to this one is durable.
        var durable: UInt64 = 0
        /// Those waiting for a commit to be durable, with its ticket's number.
        var waiters: [(ticket: UInt64, resume: @Sendable (Result<Void, DurabilityError>) -> Void)] = []
        /// The WAL file, opened on the first sync (and again when SQLite made a new one).
        var wal: OpenFile?
        /// The sync that failed, when one did: nothing is acknowledged after it.
        var failure: DurabilityError?
        /// How many syncs ran (for benchmarks: syncs per acknowledged write).
        var syncs = 0
        /// Write transactions begun and not committed yet (``GroupCommit/beginning()``).
        var writing = 0
        /// Whether the thread runs (it starts with the first waiter).
        var running = false
        /// The owner is gone: the thread ends.
        var stopping = false
    }

    struct OpenFile {
        var descriptor: CInt
        var inode: UInt64
    }

    private let walPath: String
    private let folderPath: String
    private let syncFile: @Sendable (CInt) -> CInt
    private let condition = NSCondition()
    private var state = State()

    init(databasePath: String, syncFile: @escaping @Sendable (CInt) -> CInt) {
        walPath = databasePath + "-wal"
        folderPath = URL(fileURLWithPath: databasePath).deletingLastPathComponent().path
        self.syncFile = syncFile
    }

    deinit {
        if let wal = state.wal { close(wal.descriptor) }
    }

    func locked<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    /// Calls `resume` once commit `ticket` is durable (at once when it is), or with the failure.
    func wait(for ticket: UInt64, _ resume: @escaping @Sendable (Result<Void, DurabilityError>) -> Void) {
        condition.lock()
        if let failure = state.failure {
            condition.unlock()
            return resume(.failure(failure))
        }
        guard state.durable < ticket else {
            condition.unlock()
            return resume(.success(()))
        }
        state.waiters.append((ticket, resume))
        if !state.running {
            state.running = true
            Thread.detachNewThread { [self] in run() }
        }
        condition.signal()
        condition.unlock()
    }

    /// Wakes the thread if it waits for writes in progress.
    func wake() {
        condition.signal()
    }

    func stop() {
        locked { $0.stopping = true }
        condition.signal()
    }

    /// The thread: while someone waits, one sync after another, each covering every commit made
    /// before it began; then the waiters it covered are resumed.
    private func run() {
        condition.lock()
        while !state.stopping {
            guard !state.waiters.isEmpty else {
                condition.wait()
                continue
            }
            // Writes under way commit in tens of microseconds: one sync for them all.
            let deadline = Date().addingTimeInterval(0.0002)
            while state.writing > 0, !state.stopping, condition.wait(until: deadline) {}
            let target = state.committed
            let wal = state.wal
            condition.unlock()
            let outcome = Result(catching: { () throws(DurabilityError) in try sync(wal) })
            condition.lock()
            state.syncs += 1
            switch outcome {
            case .success(let file):
                state.wal = file
                state.durable = max(state.durable, target)
            case .failure(let error):
                state.failure = error
            }
            let durable = state.durable
            let failure = state.failure
            let ready = state.waiters.filter { failure != nil || $0.ticket <= durable }
            state.waiters.removeAll { failure != nil || $0.ticket <= durable }
            condition.unlock()
            for waiter in ready { waiter.resume(failure.map { .failure($0) } ?? .success(())) }
            condition.lock()
        }
        state.running = false
        condition.unlock()
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

    func syncFolder() throws(DurabilityError) {
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
