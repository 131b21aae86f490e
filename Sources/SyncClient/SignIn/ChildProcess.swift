import Foundation
import Synchronization

/// A program started with `posix_spawn` in a process group of its own, its standard input empty
/// and its output and error on pipes.
///
/// Written here rather than using Foundation's `Process`: in a process that starts programs while
/// others end (the test suites, a dashboard renewing tokens), `Process.run()` crashed in a `memcpy`
/// of its launch, also with launches one at a time; its run-loop bookkeeping is the likeliest
/// cause. This needs none: the exit is read by `waitpid` on a thread of its own.
final class ChildProcess: Sendable {
    /// The process id, which is also its process group's.
    let pid: pid_t
    /// The read ends of its standard output and error.
    private let output: CInt
    private let errors: CInt
    private let exited = Atomic<Bool>(false)

    private init(pid: pid_t, output: CInt, errors: CInt) {
        self.pid = pid
        self.output = output
        self.errors = errors
    }

    /// Starts `arguments[0]` (an absolute path) with the rest as its arguments.
    ///
    /// A factory, not a throwing initializer: Swift 6.3's optimizer crashes (an ownership error in
    /// CopyPropagation) on a throwing initializer of a class holding an `Atomic`, in release builds.
    static func start(_ arguments: [String]) throws(POSIXError) -> ChildProcess {
        var out: [CInt] = [-1, -1]
        var err: [CInt] = [-1, -1]
        guard Self.closeOnExecPipe(&out) else { throw Self.error(errno) }
        guard Self.closeOnExecPipe(&err) else {
            close(out[0])
            close(out[1])
            throw Self.error(errno)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // dup2 clears close-on-exec on the copy: the child keeps 1 and 2, and the originals close.
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        // Nothing else: a descriptor made without close-on-exec (the pipe of a program started at the
        // same moment, before its `fcntl`; a socket) would stay open as long as this program lives,
        // and the reader of that other program's output would wait for its end as long.
        guard let closeFrom = Self.addCloseFrom else { throw POSIXError(.ENOSYS) }
        _ = closeFrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own group (so that a stop reaches what it started), and SIGPIPE as a program expects
        // it (this process ignores it, and an ignored signal stays ignored across exec).
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(out[1])
        close(err[1])
        guard result == 0 else {
            close(out[0])
            close(err[0])
            throw Self.error(result)
        }
        return ChildProcess(pid: pid, output: out[0], errors: err[0])
    }

    /// Whether it has exited (and been waited for).
    var hasExited: Bool { exited.load(ordering: .acquiring) }

    /// Its exit status once it exits (128 + the signal's number when a signal ended it); waits
    /// without holding a thread of the caller's. Call once.
    func exitStatus() async -> Int32 {
        let pid = pid
        let status = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var status: CInt = 0
                while waitpid(pid, &status, 0) == -1, errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        exited.store(true, ordering: .releasing)
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Its standard output and error, each read to its end on a thread of its own (the reads block).
    func readAll() async -> (output: Data, errors: Data) {
        async let output = Self.read(output)
        async let errors = Self.read(errors)
        return await (output, errors)
    }

    /// SIGTERM to its process group, then SIGKILL a second later: what it started goes too (a
    /// shell's `sleep` would otherwise live on, holding the pipes).
    func stop() {
        guard !hasExited else { return }
        let group = -pid
        kill(group, SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { kill(group, SIGKILL) }
    }

    private static func read(_ descriptor: CInt) async -> Data {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                continuation.resume(returning: handle.readDataToEndOfFile())
            }
        }
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module
    /// does not show.
    private static var addCloseFrom: AddCloseFrom? {
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: AddCloseFrom.self) }
    }

    /// A pipe whose ends programs started later do not inherit (`pipe2` with `O_CLOEXEC` is not
    /// visible from Swift, hence ``spawning``).
    private static func closeOnExecPipe(_ ends: inout [CInt]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private static func error(_ code: CInt) -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
}
