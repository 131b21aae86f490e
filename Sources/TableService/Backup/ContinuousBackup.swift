import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Storage
import Synchronization

/// The continuous backup of a SQLite service (`todosync serve --backup-dir`): a `Service` that
/// ships each commit to the backup folder (``WALShipper``) promptly after the store signals it, at
/// most one round per ``BackupSettings/shipInterval``, and removes generations older than
/// ``BackupSettings/keep``. Run it in the same `ServiceGroup` as the service, before it, so that it
/// stops after the service and ships its last commits.
public final class ContinuousBackup: Service, Sendable {
    /// What the backup did, for the service's page, tests and the benchmark.
    public struct Status: Sendable {
        public var rounds = 0
        public var segments = 0
        public var generations: [String] = []
        /// The time written on the newest segment.
        public var newestShippedAt: Int64?
        public var lastError: String?
        /// Time spent in rounds, and in rounds that held the service's writer (its writes waited).
        public var roundTime: Duration = .zero
        public var writerHeldTime: Duration = .zero
        public var writerHeldRounds = 0
    }

    /// One round, timed: commits acknowledged before `readAt` were durable in the backup at `durableAt`.
    public struct RoundTiming: Sendable {
        public let readAt: ContinuousClock.Instant
        public let durableAt: ContinuousClock.Instant
    }

    public let settings: BackupSettings
    private let store: SQLiteTableStore
    private let shipper: ShipperBox
    private let queue = DispatchQueue(label: "todosync.backup")
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Int64
    private let logger: Logger
    private let state = Mutex(Status())
    private let timings = Mutex<[RoundTiming]>([])
    private let recordsTimings: Bool

    init(
        store: SQLiteTableStore, path: String, settings: BackupSettings, clock: any Clock<Duration>,
        now: @escaping @Sendable () -> Int64, logger: Logger, recordsTimings: Bool = false
    ) throws(TableServiceError) {
        self.store = store
        self.settings = settings
        self.clock = clock
        self.now = now
        self.logger = logger
        self.recordsTimings = recordsTimings
        let folder = BackupFolder(path: settings.folder)
        do {
            let identity = try store.database.write { db in try BackupIdentity.ensure(in: db) }
            // The identity must outlive a power cut, or the folder would be refused at the next start.
            try store.syncNow()
            try folder.claim(for: identity, now: now())
            shipper = ShipperBox(
                try WALShipper(
                    databasePath: path, folder: folder,
                    newBaseAfter: max(60_000, BackupSettings.milliseconds(settings.keep) / 2)))
        } catch let error as BackupError {
            throw .invalidConfiguration("--backup-dir: \(error.description)")
        } catch {
            throw .invalidConfiguration("--backup-dir: \(error)")
        }
    }

    /// What the backup did so far.
    public var status: Status { state.withLock { $0 } }

    /// The rounds' timings (kept only when asked for, by the benchmark).
    @_spi(Testing) public var roundTimings: [RoundTiming] { timings.withLock { $0 } }

    /// Ships what was committed until now, and returns once it is durable in the backup folder.
    @discardableResult
    public func shipNow() async throws(BackupError) -> WALShipper.Round {
        try await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.round()) }
        }.get()
    }

    /// Ships until a graceful shutdown, then ships the last commits (the service has stopped by then).
    public func run() async {
        let signal = store.commitSignal
        let idle = settings.idleInterval
        let clock = self.clock
        await withDiscardingTaskGroup { group in
            // A round when nothing was committed for a while (one the signal does not ask for).
            group.addTask {
                while !Task.isCancelled {
                    do { try await clock.sleep(for: idle) } catch { return }
                    signal.send()
                }
            }
            var lastPrune: Int64?
            for await _ in signal.signals.cancelOnGracefulShutdown() {
                do {
                    try await shipNow()
                } catch {
                    // Logged by the round; not a base copy every 200 ms against a full disk.
                    do { try await clock.sleep(for: settings.pauseAfterFailure) } catch { break }
                }
                let time = now()
                if lastPrune.map({ time - $0 >= 60_000 }) ?? true {
                    lastPrune = time
                    prune()
                }
                do { try await clock.sleep(for: settings.shipInterval) } catch { break }
            }
            group.cancelAll()
        }
        _ = try? await shipNow()
        prune()
    }

    /// Removes the generations no restore within ``BackupSettings/keep`` needs.
    public func prune() {
        let keep = BackupSettings.milliseconds(settings.keep)
        do {
            let removed = try shipper.shipper.folder.prune(keep: keep, now: now())
            if !removed.isEmpty { logger.info("backup: removed \(removed.count) old generation(s)") }
        } catch {
            logger.warning("backup: cannot remove old generations: \(error)")
        }
    }

    /// One round, on ``queue``: a pinned round, then, when the log has grown long, a round holding
    /// the writer whose checkpoint copies the whole log, so that the next write starts it afresh.
    private func round() -> Result<WALShipper.Round, BackupError> {
        let shipper = self.shipper.shipper
        let readAt = ContinuousClock.now
        do {
            var held: Duration = .zero
            var round = try shipper.ship(now: now)
            // SQLite's own automatic checkpoint, which the service runs without, would hold the
            // writer here too (once the log passes 1,000 pages, after a commit).
            if shipper.framesInLog * (shipper.pageSize + 24) > settings.restartLogAfterBytes, !shipper.logFullyCopied {
                let more = try store.database.writeWithoutTransaction { db in
                    let start = ContinuousClock.now
                    defer { held = ContinuousClock.now - start }
                    return try shipper.shipHoldingWriter(db, now: now)
                }
                round.frames += more.frames
                round.segment = more.segment ?? round.segment
                round.committedAt = more.committedAt ?? round.committedAt
            }
            let durableAt = ContinuousClock.now
            if recordsTimings { timings.withLock { $0.append(RoundTiming(readAt: readAt, durableAt: durableAt)) } }
            state.withLock { status in
                status.rounds += 1
                status.roundTime += durableAt - readAt
                if held > .zero {
                    status.writerHeldTime += held
                    status.writerHeldRounds += 1
                }
                if round.segment != nil { status.segments += 1 }
                if let generation = round.newGeneration {
                    status.generations.append(generation.name)
                    logger.info("backup: new generation \(generation.name) (\(generation.reason))")
                }
                if let time = round.committedAt { status.newestShippedAt = time }
                status.lastError = nil
            }
            return .success(round)
        } catch {
            let failure = error as? BackupError ?? .database(path: shipper.databasePath, reason: "\(error)")
            logger.error("backup: \(failure.description)")
            shipper.restartGeneration(reason: "a round failed: \(failure.description)")
            state.withLock { $0.lastError = failure.description }
            return .failure(failure)
        }
    }
}

/// The shipper, used only on ``ContinuousBackup``'s serial queue.
// @unchecked Sendable: `shipper` is touched only from that queue, one round at a time.
private final class ShipperBox: @unchecked Sendable {
    let shipper: WALShipper
    init(_ shipper: WALShipper) { self.shipper = shipper }
}
