import Foundation
import SyncClient

/// When auto-sync syncs next, as a pure state machine: ``decide(_:now:jitter:)`` takes one input
/// (a timer tick, a local change, a sync that started or ended...) and says what the new state is
/// and whether to start a sync; ``AutoSync`` applies it.
///
/// ```
/// off ──enable──▶ waiting(next = now) ──tick──▶ syncing ──success──▶ waiting(next = now + interval)
///                   ▲   ▲ local change: next = min(next, now + debounce)   └─failure n──▶ waiting(next = now + backoff(n))
///                   │   └──── back online / new token ◀── paused(offline | unauthorized) ◀── offline / 401
///                   └─ other work ended: next = now ◀── behind other work ◀── tick, but a verify runs
/// ```
///
/// Failures back off exponentially with full jitter: the n-th waits a random time up to
/// `min(cap, base · 2^(n-1))`. A success or a Sync now (a sync a person started) resets them. While
/// it backs off after the service was unreachable, it asks every few seconds whether the service
/// answers again (``wantsProbe``), and syncs as soon as it does.
struct AutoSyncSchedule: Sendable, Equatable {
    /// Why auto-sync waits for something other than time.
    enum Pause: Sendable, Equatable {
        /// Offline mode is on: nothing is sent until it is off.
        case offline
        /// The service refused the credentials (401/403): no retry until the sign-in token changes
        /// from `token` (the hint of the one refused) or is sent another way than `style`.
        case unauthorized(token: AuthTokenHint?, style: AuthStyle? = nil)
    }

    /// What is seen of the world with each input.
    struct Observation: Sendable, Equatable {
        var now: Date
        var offline: Bool
        var token: AuthTokenHint?
        /// How the token is sent, as chosen (nil: as the protocol's clients send it).
        var style: AuthStyle? = nil
    }

    /// How a sync ended, as auto-sync tells outcomes apart.
    enum Outcome: Sendable, Equatable {
        case success
        /// No answer came: the service was unreachable, or stalled past a deadline.
        case unreachable(String)
        /// It could not finish otherwise: a server error, a broken answer... (the message says which).
        case failure(String)
        /// The service refused the credentials.
        case unauthorized(String)
        /// Offline mode was on, or the sync was cancelled: neither a success nor a failure.
        case skipped

        /// The outcome of a sync that ended with `error` (nil: it succeeded).
        init(_ error: SyncError?) {
            switch error {
            case nil: self = .success
            case .stopped(.notAuthorized)?, .stopped(.accessRevoked)?: self = .unauthorized(error?.description ?? "")
            case .stopped(.offline)?, .stopped(.cancelled)?: self = .skipped
            case .stopped(.unreachable)?, .stopped(.connectionLost)?, .stopped(.timedOut)?, .stopped(.stalled)?,
                .stopped(.tooSlow)?:
                self = .unreachable(error?.description ?? "")
            case let error?: self = .failure(error.description)
            }
        }
    }

    /// What auto-sync is doing, besides waiting for its next attempt's time.
    enum Activity: Sendable, Equatable {
        case idle
        /// A sync runs (auto-sync's or a person's).
        case syncing
        /// Its sync was due but could not start: other work (a verify) runs. It syncs when that
        /// ends (``Input/otherWorkEnded``), not an interval later.
        case behindOtherWork
    }

    /// One thing that happened.
    enum Input: Sendable, Equatable {
        /// The interval was set (nil: auto-sync off).
        case configure(interval: TimeInterval?)
        /// The next attempt's time came, or a setting that may lift a pause changed.
        case tick
        /// A local change was queued.
        case localChange
        /// The remote's change channel announced a change this store has not pulled.
        case remoteChange
        /// The change channel is followed (a local change is then pushed at once) or not.
        case following(Bool)
        /// A sync started; `manual` when a person started it (Sync now).
        case syncStarted(manual: Bool)
        case syncFinished(Outcome)
        /// A reachability probe (see ``wantsProbe``) ended: the service answered, or still not.
        case probed(answered: Bool)
        /// The sync it decided to start did not start: other work runs (one job at a time).
        case couldNotStart
        /// The background work (of any kind, a verify too) ended and none runs now.
        case otherWorkEnded
    }

    /// The delays, in seconds.
    struct Timing: Sendable, Equatable {
        /// The first failure's longest wait; each next failure doubles it...
        var backoffBase: TimeInterval = 2
        /// ...up to this.
        var backoffCap: TimeInterval = 300
        /// How long after a local change the sync starts (more changes in the meantime join it).
        var debounce: TimeInterval = 3
        /// While it backs off after the service was unreachable, how often it asks whether the
        /// service answers again (one small request; a sync follows at once when it does).
        var probeEvery: TimeInterval = 5
        /// The share of the backoff ceiling waited; nil: a random one each time (full jitter).
        /// Tests fix it to see the waits grow.
        var fixedJitter: Double?
    }

    /// Seconds between syncs; nil when auto-sync is off.
    var interval: TimeInterval?
    /// When the next sync starts (nil: none planned — off, paused, syncing, or behind other work).
    var nextAttemptAt: Date?
    var consecutiveFailures = 0
    var lastError: String?
    var pause: Pause?
    var activity = Activity.idle
    /// The last failure was that no answer came (not an error answer).
    var lastFailureUnreachable = false
    /// The remote's change channel is followed: changes on either side are synced at once.
    var following = false
    /// A change came while a sync ran, which may have missed it: another sync follows at once.
    var followUp = false

    /// A sync runs now (auto-sync's or a person's).
    var syncing: Bool { activity == .syncing }

    /// Whether to ask every ``Timing/probeEvery`` if the service answers again: while backing off
    /// after it was unreachable. (After an error answer it is reachable: only the backoff decides,
    /// so that a failing service is not asked more often.)
    var wantsProbe: Bool {
        interval != nil && pause == nil && activity == .idle && consecutiveFailures > 0 && lastFailureUnreachable
    }

    /// The longest wait after the `failures`-th failure in a row.
    static func backoffCeiling(failures: Int, timing: Timing) -> TimeInterval {
        guard failures > 0 else { return 0 }
        return min(timing.backoffCap, timing.backoffBase * pow(2, Double(min(failures - 1, 30))))
    }

    /// The state after `input`, and whether to start a sync now. `jitter` is a random number in
    /// 0...1 (the share of the backoff ceiling waited).
    func decide(
        _ input: Input, seen: Observation, jitter: Double, timing: Timing = Timing()
    ) -> (
        AutoSyncSchedule, startSync: Bool
    ) {
        var next = self
        switch input {
        case .configure(let interval):
            next.interval = interval.flatMap { $0 > 0 ? $0 : nil }
            guard next.interval != nil else {
                next.nextAttemptAt = nil
                if next.activity == .behindOtherWork { next.activity = .idle }
                return (next, false)
            }
            if next.activity == .idle, next.pause == nil { next.nextAttemptAt = seen.now }
            return next.liftPause(seen)
        case .tick:
            return next.liftPause(seen)
        case .probed(let answered):
            return next.serviceAnswers(answered, seen)
        case .following(let following):
            next.following = following
            // A stream opened again is an answer from the service, as a probe's is.
            return following ? next.serviceAnswers(true, seen) : (next, false)
        case .localChange where next.following, .remoteChange:
            guard next.interval != nil, next.pause == nil, next.consecutiveFailures == 0 else { return (next, false) }
            // A sync under way may have begun before the change: the next one takes it.
            guard next.activity == .idle else {
                next.followUp = true
                return (next, false)
            }
            next.nextAttemptAt = seen.now
            return next.liftPause(seen)
        case .localChange:
            // Behind other work, the sync after it takes the change.
            guard next.interval != nil, next.pause == nil, next.activity == .idle, next.consecutiveFailures == 0 else {
                return (next, false)
            }
            let soon = seen.now.addingTimeInterval(timing.debounce)
            next.nextAttemptAt = min(next.nextAttemptAt ?? soon, soon)
            return (next, false)
        case .syncStarted(let manual):
            next.activity = .syncing
            next.nextAttemptAt = nil
            if manual {
                next.consecutiveFailures = 0
                if case .unauthorized? = next.pause { next.pause = nil }
            }
            return (next, false)
        case .couldNotStart:
            next.activity = .behindOtherWork
            next.nextAttemptAt = nil
            return (next, false)
        case .otherWorkEnded:
            guard next.activity == .behindOtherWork else { return (next, false) }
            next.activity = .idle
            if next.interval != nil, next.pause == nil { next.nextAttemptAt = seen.now }
            return next.liftPause(seen)
        case .syncFinished(let outcome):
            next.activity = .idle
            switch outcome {
            case .success:
                next.consecutiveFailures = 0
                next.lastError = nil
                next.pause = nil
                next.lastFailureUnreachable = false
            case .unreachable(let message), .failure(let message), .unauthorized(let message):
                next.consecutiveFailures += 1
                next.lastError = message
                next.lastFailureUnreachable = outcome == .unreachable(message)
                if outcome == .unauthorized(message) {
                    next.pause = .unauthorized(token: seen.token, style: seen.style)
                }
            case .skipped:
                break
            }
            guard let interval = next.interval else { return (next, false) }
            if seen.offline { next.pause = .offline }
            guard next.pause == nil else {
                next.nextAttemptAt = nil
                return (next, false)
            }
            var wait =
                next.consecutiveFailures == 0
                ? interval
                : jitter * Self.backoffCeiling(failures: next.consecutiveFailures, timing: timing)
            if next.followUp, next.consecutiveFailures == 0 { wait = 0 }
            next.followUp = false
            next.nextAttemptAt = seen.now.addingTimeInterval(wait)
            return (next, false)
        }
    }

    /// After the service answered again while auto-sync backed off from it: sync now rather than at
    /// the end of the backoff.
    private func serviceAnswers(_ answered: Bool, _ seen: Observation) -> (AutoSyncSchedule, startSync: Bool) {
        var next = self
        guard answered, next.wantsProbe else { return next.liftPause(seen) }
        next.nextAttemptAt = seen.now
        return next.liftPause(seen)
    }

    /// Lifts a pause whose reason is gone (back online, another token), pauses for offline mode,
    /// and starts the sync whose time has come.
    private func liftPause(_ seen: Observation) -> (AutoSyncSchedule, startSync: Bool) {
        var next = self
        guard next.interval != nil, next.activity != .syncing else { return (next, false) }
        switch next.pause {
        case .offline?:
            guard !seen.offline else { return (next, false) }
            next.pause = nil
            next.nextAttemptAt = seen.now
        case .unauthorized(let refused, let refusedStyle)?:
            guard seen.token != refused || seen.style != refusedStyle else { return (next, false) }
            next.pause = nil
            next.consecutiveFailures = 0
            next.nextAttemptAt = seen.now
        case nil:
            if seen.offline {
                next.pause = .offline
                next.nextAttemptAt = nil
                return (next, false)
            }
        }
        guard let due = next.nextAttemptAt, due <= seen.now else { return (next, false) }
        next.activity = .syncing
        next.nextAttemptAt = nil
        return (next, true)
    }
}
