import Background
import Foundation
import SyncClient
import Synchronization

/// Syncs by itself: every interval, a few seconds after a local change, and after failures with a
/// growing backoff (see ``AutoSyncSchedule``, which decides; this only applies its decisions).
/// When the remote offers a change channel (``LiveMode``), it follows each synced table's and syncs
/// as soon as a change is announced there or made here. It
/// starts syncs through ``BackgroundSync`` into the context's ``JobSlot``, so a sync a person starts
/// and one it starts never run at once, and it hears of every job's start and end from the slot.
final class AutoSync: Sendable {
    private struct Driver {
        var schedule = AutoSyncSchedule()
        /// Counts the decisions: a timer made for an earlier one is not kept.
        var decision = 0
        /// The timer of the planned attempt (``AutoSyncSchedule/nextAttemptAt``): it ticks.
        var timer: (any ClockTimer)?
        /// Asks whether the service answers again (see ``AutoSyncSchedule/wantsProbe``).
        var probe: BackgroundJob?
        var stopped = false
    }

    private let sync: BackgroundSync
    private let context: SyncContext
    private let metrics: DashboardMetrics
    private let timing: AutoSyncSchedule.Timing
    /// What time it is, and the timers of the next attempt and probe (tests move it).
    private let clock: any WallClock
    /// The dashboard's background work: the listening, the following and the probes are its jobs.
    private let work: BackgroundWork
    private let driver = Mutex(Driver())
    private let listening = Mutex<BackgroundJob?>(nil)
    private let live: LiveMode
    /// One job per synced table following the remote's change channel.
    private let followers = Mutex<[BackgroundJob]>([])
    /// The tables whose change stream is up now.
    private let connected = Mutex<Set<String>>([])
    /// With `--live on`, what the remote answered when it offered no change channel.
    private let channelMissing = Mutex<Int?>(nil)

    init(
        sync: BackgroundSync, context: SyncContext, metrics: DashboardMetrics, work: BackgroundWork,
        timing: AutoSyncSchedule.Timing = .init(), live: LiveMode = .auto, clock: any WallClock = SystemWallClock()
    ) {
        self.clock = clock
        self.sync = sync
        self.context = context
        self.metrics = metrics
        self.work = work
        self.timing = timing
        self.live = live
    }

    /// Starts listening to syncs and local changes, with `interval` seconds between syncs (nil or 0:
    /// off until ``setInterval(_:)``).
    func start(interval: TimeInterval?) {
        context.jobs.observe { [weak self] event in
            switch event {
            case .started(let start) where start.job.isSync: self?.apply(.syncStarted(manual: !start.automatic))
            case .finished(let end) where end.job.isSync:
                self?.apply(.syncFinished(AutoSyncSchedule.Outcome(end.error)))
            case .released: self?.apply(.otherWorkEnded)
            case .started, .finished: break
            }
        }
        let updates = context.localChanges()
        listening.withLock {
            $0 = work.run { [weak self] in
                for await _ in updates { self?.apply(.localChange) }
            }
        }
        setInterval(interval)
    }

    /// Follows each synced table's change channel while auto-sync is on (and `--live` is not off);
    /// a remote without one leaves auto-sync polling.
    private func follow(_ on: Bool) {
        let wanted = on && live != .off
        let tables = wanted ? ((try? context.syncedTables()) ?? []) : []
        let stopped = followers.withLock { followers -> [BackgroundJob] in
            guard wanted else {
                defer { followers = [] }
                return followers
            }
            if followers.isEmpty { followers = tables.map(follower) }
            return []
        }
        for follower in stopped { follower.cancel() }
    }

    private func follower(_ table: String) -> BackgroundJob {
        let context = self.context
        return work.run { [weak self] in
            let end = await context.followChanges(
                of: table, connected: { [weak self] in self?.streamChanged(table, up: $0) },
                changed: { [weak self] in self?.apply(.remoteChange) })
            if case .notOffered(let status) = end { self?.channelMissing.withLock { $0 = status } }
        }
    }

    private func streamChanged(_ table: String, up: Bool) {
        let following = connected.withLock { tables in
            if up { tables.insert(table) } else { tables.remove(table) }
            return !tables.isEmpty
        }
        apply(.following(following))
    }

    /// Syncs every `interval` seconds from now on; nil or 0 turns auto-sync off.
    func setInterval(_ interval: TimeInterval?) {
        apply(.configure(interval: interval))
        follow((interval ?? 0) > 0)
    }

    /// Something that may lift a pause changed (offline mode, the sign-in token): looks again now.
    func nudge() {
        apply(.tick)
        // Streams stopped by a refused sign-in follow again, with the token as it is now.
        let on = driver.withLock { $0.schedule.interval != nil }
        follow(false)
        follow(on)
    }

    /// Stops the timer, the probe, the following and the listening; no sync starts afterwards.
    func stop() {
        let (timer, probe) = driver.withLock { driver in
            driver.stopped = true
            defer { (driver.timer, driver.probe) = (nil, nil) }
            return (driver.timer, driver.probe)
        }
        timer?.cancel()
        probe?.cancel()
        listening.withLock { $0 }?.cancel()
        for follower in followers.withLock({ $0 }) { follower.cancel() }
    }

    /// What `/api/status` and the header show.
    var status: AutoSyncStatus {
        let schedule = driver.withLock { $0.schedule }
        var status = AutoSyncStatus(schedule, now: clock.now, live: schedule.following)
        if live == .on, let missing = channelMissing.withLock({ $0 }), status.enabled {
            status.label = "polling: the remote has no change channel (HTTP \(missing))"
        }
        return status
    }

    private func apply(_ input: AutoSyncSchedule.Input) {
        let seen = AutoSyncSchedule.Observation(
            now: clock.now, offline: context.isOffline, token: context.authTokenHint, style: context.authStyleChoice)
        let decided = driver.withLock {
            driver -> (start: Bool, next: Date?, decision: Int, replaced: (any ClockTimer)?)? in
            guard !driver.stopped else { return nil }
            let (schedule, start) = driver.schedule.decide(
                input, seen: seen, jitter: timing.fixedJitter ?? Double.random(in: 0...1), timing: timing)
            driver.schedule = schedule
            driver.decision += 1
            if case .probed = input { driver.probe = nil }
            if schedule.wantsProbe, driver.probe == nil {
                let (context, clock, due) = (context, clock, seen.now.addingTimeInterval(timing.probeEvery))
                driver.probe = work.run { [weak self] in
                    guard (try? await clock.sleep(until: due)) != nil else { return }
                    let answered = await context.remoteAnswers()
                    guard !Task.isCancelled else { return }
                    self?.apply(.probed(answered: answered))
                }
            }
            defer { driver.timer = nil }
            return (start, schedule.nextAttemptAt, driver.decision, driver.timer)
        }
        guard let decided else { return }
        decided.replaced?.cancel()
        if let due = decided.next { arm(at: due, for: decided.decision) }
        // Only a change: every local edit comes through here, and the gauge is made or removed by it.
        if metrics.nextAttempt != decided.next { metrics.nextAttempt = decided.next }
        guard decided.start, !sync.start(.sync, session: nil, automatic: true) else { return }
        // Other work runs (a verify, or a sync that is ending): this sync did not start, and no end
        // of it will be told. It starts once that work ends (told as `.idle`); that work may have
        // ended before this was applied, its end then finding nothing waiting: look once more.
        apply(.couldNotStart)
        if !sync.isRunning { apply(.otherWorkEnded) }
    }

    /// Sets the one timer, for the attempt planned by decision `decision`; a later decision has set
    /// its own (a tick that comes anyway, early or late, changes nothing: the schedule looks at the
    /// time). Made outside the lock: a timer already due ticks at once.
    private func arm(at due: Date, for decision: Int) {
        let timer = clock.schedule(at: due) { [weak self] in self?.apply(.tick) }
        let kept = driver.withLock { driver in
            guard driver.decision == decision, !driver.stopped else { return false }
            driver.timer = timer
            return true
        }
        if !kept { timer.cancel() }
    }
}

/// Auto-sync as `/api/status` gives it (`autoSync`) and the header says it.
struct AutoSyncStatus: Encodable, Sendable, Equatable {
    var enabled: Bool
    /// Seconds between syncs (nil: off).
    var interval: Double?
    var nextAttemptAt: Date?
    var consecutiveFailures: Int
    var lastError: String?
    /// "next try in 40 s", "auto-sync paused: offline"... (empty when off).
    var label: String
    /// How the store follows the service: the header's Live, Polling every N s, or Offline.
    var follow: FollowMode

    init(_ schedule: AutoSyncSchedule, now: Date, live: Bool = false) {
        enabled = schedule.interval != nil
        follow =
            switch (schedule.interval, schedule.pause) {
            case (nil, _): .off
            case (_, .offline?): .offline
            case _ where live: .live
            default: .polling
            }
        interval = schedule.interval
        nextAttemptAt = schedule.nextAttemptAt
        consecutiveFailures = schedule.consecutiveFailures
        lastError = schedule.lastError
        label = Self.label(schedule, now: now)
    }

    private static func label(_ schedule: AutoSyncSchedule, now: Date) -> String {
        guard schedule.interval != nil else { return "" }
        switch schedule.pause {
        case .offline?: return "auto-sync paused: offline"
        case .unauthorized?: return "auto-sync stopped: sign in again"
        case nil: break
        }
        guard let next = schedule.nextAttemptAt else {
            switch schedule.activity {
            case .idle: return "auto-sync on"
            case .syncing: return ""
            case .behindOtherWork: return "next sync when the verify ends"
            }
        }
        let seconds = max(0, Int(next.timeIntervalSince(now).rounded(.up)))
        let when = seconds < 90 ? "\(seconds) s" : "\(Int((Double(seconds) / 60).rounded())) min"
        return schedule.consecutiveFailures > 0 ? "next try in \(when)" : "next sync in \(when)"
    }
}

/// How the store follows the service's changes.
enum FollowMode: String, Encodable, Sendable {
    /// Subscribed to the service's change channel: a change there is pulled within a second.
    case live
    /// Syncing every ``AutoSyncStatus/interval`` seconds (the service offers no change channel).
    case polling
    /// Offline mode: nothing is synced.
    case offline
    /// Auto-sync is off: only syncs a person starts.
    case off
}
