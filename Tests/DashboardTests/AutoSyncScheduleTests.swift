import Foundation
import SyncClient
import Testing

@testable import Dashboard

/// Auto-sync's decisions, as a pure function of its state and one input.
@Suite struct AutoSyncScheduleTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let timing = AutoSyncSchedule.Timing()

    func seen(
        _ seconds: TimeInterval = 0, offline: Bool = false, token: String? = nil, style: AuthStyle? = nil
    ) -> AutoSyncSchedule.Observation {
        AutoSyncSchedule.Observation(
            now: start.addingTimeInterval(seconds), offline: offline, token: token.map(AuthTokenHint.init),
            style: style)
    }

    /// An auto-sync on every 60 s whose first sync has started.
    func syncing() -> AutoSyncSchedule {
        let (started, go) = AutoSyncSchedule().decide(.configure(interval: 60), seen: seen(), jitter: 1)
        #expect(go && started.syncing)
        return started
    }

    @Test func turningItOnSyncsAtOnceThenEveryInterval() {
        let (on, go) = AutoSyncSchedule().decide(.configure(interval: 60), seen: seen(), jitter: 1)
        #expect(go && on.syncing && on.nextAttemptAt == nil)
        let (done, _) = syncing().decide(.syncFinished(.success), seen: seen(2), jitter: 1)
        #expect(done.nextAttemptAt == start.addingTimeInterval(62) && !done.syncing)
        let (early, goEarly) = done.decide(.tick, seen: seen(30), jitter: 1)
        #expect(!goEarly && early == done, "a tick before the time changes nothing")
    }

    @Test func followingTheChannelAChangeOnEitherSideSyncsAtOnce() {
        let (idle, _) = syncing().decide(.syncFinished(.success), seen: seen(1), jitter: 1)
        let (live, _) = idle.decide(.following(true), seen: seen(2), jitter: 1)
        let (remote, goRemote) = live.decide(.remoteChange, seen: seen(3), jitter: 1)
        #expect(goRemote && remote.syncing)
        let (local, goLocal) = live.decide(.localChange, seen: seen(3), jitter: 1)
        #expect(goLocal && local.syncing, "no debounce while live")
        let (polling, goPolling) = idle.decide(.localChange, seen: seen(3), jitter: 1)
        #expect(!goPolling && polling.nextAttemptAt == start.addingTimeInterval(3 + timing.debounce))
    }

    /// A change told while a sync runs may have come after its pull began: another sync follows.
    @Test func aChangeDuringASyncGetsASyncRightAfterIt() {
        let (live, _) = syncing().decide(.following(true), seen: seen(1), jitter: 1)
        let (waiting, go) = live.decide(.remoteChange, seen: seen(2), jitter: 1)
        #expect(!go && waiting.followUp)
        let (done, _) = waiting.decide(.syncFinished(.success), seen: seen(3), jitter: 1)
        #expect(done.nextAttemptAt == start.addingTimeInterval(3) && !done.followUp)
        let (plain, _) = live.decide(.syncFinished(.success), seen: seen(3), jitter: 1)
        #expect(plain.nextAttemptAt == start.addingTimeInterval(63))
    }

    @Test func offMeansNoAttemptWhateverHappens() {
        let off = AutoSyncSchedule()
        for input: AutoSyncSchedule.Input in [.tick, .localChange, .syncFinished(.failure("down"))] {
            let (next, go) = off.decide(input, seen: seen(), jitter: 1)
            #expect(!go && next.nextAttemptAt == nil)
        }
        let (stopped, _) = syncing().decide(.configure(interval: nil), seen: seen(), jitter: 1)
        #expect(stopped.nextAttemptAt == nil)
        let (_, go) = stopped.decide(.syncFinished(.success), seen: seen(1), jitter: 1)
        #expect(!go)
    }

    @Test func failuresBackOffExponentiallyUpToTheCapWithFullJitter() {
        #expect(
            (1...10).map { AutoSyncSchedule.backoffCeiling(failures: $0, timing: timing) } == [
                2, 4, 8, 16, 32, 64, 128, 256, 300, 300,
            ])
        var schedule = syncing()
        var waits: [TimeInterval] = []
        for failure in 1...4 {
            (schedule, _) = schedule.decide(.syncFinished(.failure("unreachable")), seen: seen(), jitter: 0.5)
            waits.append(schedule.nextAttemptAt!.timeIntervalSince(start))
            #expect(schedule.consecutiveFailures == failure && schedule.lastError == "unreachable")
            (schedule, _) = schedule.decide(.syncStarted(manual: false), seen: seen(), jitter: 0.5)
        }
        #expect(waits == [1, 2, 4, 8], "half of each ceiling with jitter 0.5")
        let (none, _) = syncing().decide(.syncFinished(.failure("x")), seen: seen(), jitter: 0)
        #expect(none.nextAttemptAt == start, "full jitter may retry at once")
    }

    @Test func aSuccessOrSyncNowResetsTheBackoff() {
        var (failed, _) = syncing().decide(.syncFinished(.failure("down")), seen: seen(), jitter: 1)
        (failed, _) = failed.decide(.syncStarted(manual: false), seen: seen(), jitter: 1)
        (failed, _) = failed.decide(.syncFinished(.failure("down")), seen: seen(), jitter: 1)
        #expect(failed.consecutiveFailures == 2)
        let (manual, _) = failed.decide(.syncStarted(manual: true), seen: seen(), jitter: 1)
        #expect(manual.consecutiveFailures == 0 && manual.syncing, "Sync now")
        let (ok, _) = failed.decide(.syncFinished(.success), seen: seen(), jitter: 1)
        #expect(ok.consecutiveFailures == 0 && ok.lastError == nil && ok.nextAttemptAt == start.addingTimeInterval(60))
    }

    @Test func aLocalChangeBringsTheNextSyncCloserButNeverDuringBackoff() {
        let (idle, _) = syncing().decide(.syncFinished(.success), seen: seen(), jitter: 1)
        let (soon, go) = idle.decide(.localChange, seen: seen(10), jitter: 1)
        #expect(!go && soon.nextAttemptAt == start.addingTimeInterval(13))
        let (later, _) = soon.decide(.localChange, seen: seen(12), jitter: 1)
        #expect(later.nextAttemptAt == start.addingTimeInterval(13), "a second change joins the planned sync")
        let (failing, _) = syncing().decide(.syncFinished(.failure("down")), seen: seen(), jitter: 1)
        let (still, _) = failing.decide(.localChange, seen: seen(), jitter: 1)
        #expect(still == failing, "no hammering while the service is down")
        let (running, _) = syncing().decide(.localChange, seen: seen(), jitter: 1)
        #expect(running.nextAttemptAt == nil, "the running sync is not doubled")
    }

    @Test func neverStartsWhileASyncRuns() {
        let (manual, _) = AutoSyncSchedule().decide(.syncStarted(manual: true), seen: seen(), jitter: 1)
        let (on, goOn) = manual.decide(.configure(interval: 60), seen: seen(), jitter: 1)
        #expect(!goOn && on.syncing, "turned on while a person's sync runs: it waits for that one")
        let (tick, go) = on.decide(.tick, seen: seen(100), jitter: 1)
        #expect(!go && tick.syncing && tick.nextAttemptAt == nil)
    }

    @Test func aSyncThatCouldNotStartBesideOtherWorkStartsWhenThatWorkEnds() {
        let (behind, go) = syncing().decide(.couldNotStart, seen: seen(), jitter: 1)
        #expect(!go && behind.activity == .behindOtherWork && behind.nextAttemptAt == nil, "no timer, no retry loop")
        #expect(AutoSyncStatus(behind, now: start).label == "next sync when the verify ends")
        for input: AutoSyncSchedule.Input in [.tick, .localChange, .probed(answered: true)] {
            let (same, goNow) = behind.decide(input, seen: seen(1), jitter: 1)
            #expect(!goNow && same == behind, "\(input): the sync after the work takes it")
        }
        let (started, goAfter) = behind.decide(.otherWorkEnded, seen: seen(5), jitter: 1)
        #expect(goAfter && started.syncing, "at once, not an interval later")
        let (idle, _) = syncing().decide(.syncFinished(.success), seen: seen(), jitter: 1)
        let (unchanged, goIdle) = idle.decide(.otherWorkEnded, seen: seen(5), jitter: 1)
        #expect(!goIdle && unchanged == idle, "work ending while nothing waits changes nothing")
        let (manual, _) = behind.decide(.syncStarted(manual: true), seen: seen(1), jitter: 1)
        #expect(manual.syncing, "a person's sync was the work: its end plans the next")
    }

    @Test func behindOtherWorkItStillPausesForOfflineAndStopsWhenTurnedOff() {
        let (behind, _) = syncing().decide(.couldNotStart, seen: seen(), jitter: 1)
        let (paused, _) = behind.decide(.otherWorkEnded, seen: seen(1, offline: true), jitter: 1)
        #expect(paused.pause == .offline && paused.nextAttemptAt == nil && paused.activity == .idle)
        let (back, go) = paused.decide(.tick, seen: seen(2), jitter: 1)
        #expect(go && back.syncing, "back online: it syncs")
        let (off, _) = behind.decide(.configure(interval: nil), seen: seen(1), jitter: 1)
        let (stillOff, goOff) = off.decide(.otherWorkEnded, seen: seen(2), jitter: 1)
        #expect(!goOff && stillOff.nextAttemptAt == nil && stillOff.activity == .idle)
    }

    @Test func offlineModePausesAndBackOnlineSyncsAtOnce() {
        let (paused, _) = syncing().decide(.syncFinished(.skipped), seen: seen(offline: true), jitter: 1)
        #expect(paused.pause == .offline && paused.nextAttemptAt == nil)
        let (stillPaused, go) = paused.decide(.tick, seen: seen(5, offline: true), jitter: 1)
        #expect(!go && stillPaused.pause == .offline)
        let (resumed, goNow) = paused.decide(.tick, seen: seen(6), jitter: 1)
        #expect(goNow && resumed.pause == nil && resumed.syncing)
        let (idle, _) = syncing().decide(.syncFinished(.success), seen: seen(), jitter: 1)
        let (offline, _) = idle.decide(.tick, seen: seen(1, offline: true), jitter: 1)
        #expect(offline.pause == .offline, "turned offline between syncs")
    }

    @Test func aRefusedSignInStopsUntilTheTokenChanges() {
        let (refused, _) = syncing().decide(
            .syncFinished(.unauthorized("HTTP 401")), seen: seen(token: "old-token-1111"), jitter: 1)
        #expect(refused.pause == .unauthorized(token: AuthTokenHint("old-token-1111")))
        #expect(refused.nextAttemptAt == nil && refused.lastError == "HTTP 401")
        let (same, go) = refused.decide(.tick, seen: seen(600, token: "old-token-1111"), jitter: 1)
        #expect(!go && same.pause != nil, "no hammering with the refused token")
        let (_, local) = refused.decide(.localChange, seen: seen(601, token: "old-token-1111"), jitter: 1)
        #expect(!local)
        let (again, goAgain) = refused.decide(.tick, seen: seen(602, token: "new-token-22222"), jitter: 1)
        #expect(goAgain && again.pause == nil && again.consecutiveFailures == 0)
    }

    @Test func aRefusedSignInIsTriedAgainWhenTheTokenGoesInAnotherHeader() {
        let (refused, _) = syncing().decide(
            .syncFinished(.unauthorized("HTTP 401")), seen: seen(token: "the-token-1111"), jitter: 1)
        let (same, go) = refused.decide(.tick, seen: seen(60, token: "the-token-1111"), jitter: 1)
        #expect(!go && same.pause != nil)
        let (bearer, goBearer) = refused.decide(
            .tick, seen: seen(61, token: "the-token-1111", style: .bearer), jitter: 1)
        #expect(goBearer && bearer.pause == nil)
    }

    @Test func outcomesAreToldApartFromTheError() {
        #expect(AutoSyncSchedule.Outcome(nil) == .success)
        #expect(AutoSyncSchedule.Outcome(.stopped(.offline)) == .skipped)
        #expect(AutoSyncSchedule.Outcome(.stopped(.cancelled)) == .skipped)
        let refused = SyncError.stopped(.notAuthorized(status: .unauthorized, message: "expired"))
        #expect(AutoSyncSchedule.Outcome(refused) == .unauthorized(refused.description))
        let down = SyncError.stopped(.unreachable("connection refused"))
        #expect(AutoSyncSchedule.Outcome(down) == .unreachable(down.description))
        #expect(
            AutoSyncSchedule.Outcome(.stopped(.stalled(seconds: 30)))
                == .unreachable(SyncError.stopped(.stalled(seconds: 30)).description))
        let failing = SyncError.stopped(.serverError(status: .internalServerError, message: "boom"))
        #expect(AutoSyncSchedule.Outcome(failing) == .failure(failing.description))
    }

    @Test func afterNoAnswerItAsksWhetherTheServiceIsBackAndSyncsAtOnceWhenItIs() {
        let (down, _) = syncing().decide(.syncFinished(.unreachable("refused")), seen: seen(), jitter: 1)
        #expect(down.wantsProbe && down.nextAttemptAt == start.addingTimeInterval(2))
        let (still, no) = down.decide(.probed(answered: false), seen: seen(1), jitter: 1)
        #expect(!no && still.wantsProbe && still.nextAttemptAt == down.nextAttemptAt)
        let (back, go) = down.decide(.probed(answered: true), seen: seen(1), jitter: 1)
        #expect(go && back.syncing && !back.wantsProbe, "before the backoff's end")
        // After an error answer the service is reachable: only the backoff decides (no extra requests).
        let (failing, _) = syncing().decide(.syncFinished(.failure("HTTP 500")), seen: seen(), jitter: 1)
        #expect(!failing.wantsProbe)
        let (ignored, goIgnored) = failing.decide(.probed(answered: true), seen: seen(1), jitter: 1)
        #expect(!goIgnored && ignored.nextAttemptAt == failing.nextAttemptAt)
    }

    /// A change stream opened again after the service was unreachable (it restarted) is an answer:
    /// the queue goes out then, not at the end of the backoff.
    @Test func aStreamOpenedAgainAfterNoAnswerSyncsAtOnce() {
        let (down, _) = syncing().decide(.syncFinished(.unreachable("refused")), seen: seen(), jitter: 1)
        let (lost, goLost) = down.decide(.following(false), seen: seen(1), jitter: 1)
        #expect(!goLost && lost.nextAttemptAt == down.nextAttemptAt)
        let (back, go) = lost.decide(.following(true), seen: seen(1), jitter: 1)
        #expect(go && back.syncing && back.following)
    }

    @Test func theStatusSaysWhenTheNextTryIs() {
        let (failed, _) = syncing().decide(.syncFinished(.failure("down")), seen: seen(), jitter: 1)
        #expect(AutoSyncStatus(failed, now: start).label == "next try in 2 s")
        let (ok, _) = syncing().decide(.syncFinished(.success), seen: seen(), jitter: 1)
        #expect(AutoSyncStatus(ok, now: start.addingTimeInterval(20)).label == "next sync in 40 s")
        #expect(AutoSyncStatus(AutoSyncSchedule(), now: start).label == "")
        #expect(AutoSyncStatus(ok, now: start).enabled && AutoSyncStatus(ok, now: start).interval == 60)
    }
}
