import AsyncHTTPClient
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SyncClient

/// The two deadlines of an exchange, as a rule and on a clock the test moves.
@Suite(.timeLimit(.minutes(10))) struct ExchangeDeadlinesTests {
    private let sent = Date(timeIntervalSince1970: 1_800_000_000)
    private let deadlines = ExchangeDeadlines(idle: 1, total: 3, clock: SystemWallClock())

    private func at(_ seconds: TimeInterval) -> Date { sent.addingTimeInterval(seconds) }

    @Test func anExchangeWaitsUntilTheEarlierOfItsTwoDeadlines() {
        #expect(deadlines.verdict(started: sent, lastHeard: sent, now: sent) == .waitUntil(at(1)))
        #expect(deadlines.verdict(started: sent, lastHeard: at(2.5), now: at(2.6)) == .waitUntil(at(3)))
    }

    @Test func nothingHeardForTheIdleDeadlineStallsIt() {
        #expect(deadlines.verdict(started: sent, lastHeard: sent, now: at(1)) == .stalled)
        #expect(deadlines.verdict(started: sent, lastHeard: at(0.5), now: at(1.5)) == .stalled)
    }

    @Test func anAnswerTricklingUnderTheIdleDeadlineEndsAtTheTotalDeadline() {
        var lastHeard = sent
        var now = sent
        // A byte every 0.9 s: never quiet for 1 s, and still not done after 3 s.
        while case .waitUntil = deadlines.verdict(started: sent, lastHeard: lastHeard, now: now) {
            now = now.addingTimeInterval(0.9)
            lastHeard = now
        }
        #expect(deadlines.verdict(started: sent, lastHeard: lastHeard, now: now) == .tooSlow)
        #expect(now > at(3) && now < at(4))
    }

    @Test func theTotalDeadlineWinsWhenBothPassed() {
        #expect(deadlines.verdict(started: sent, lastHeard: sent, now: at(5)) == .tooSlow)
    }

    /// The deadlines a watch said passed, in order.
    private final class Passes: Sendable {
        private let list = Mutex<[SyncError]>([])
        var all: [SyncError] { list.withLock { $0 } }
        func add(_ error: SyncError) { list.withLock { $0.append(error) } }
    }

    /// Watches an exchange sent at `sent` on `clock`.
    private func watch(_ clock: ManualWallClock, _ heard: HeardTime) -> (watch: ExchangeWatch, passed: Passes) {
        let passed = Passes()
        let watch = ExchangeDeadlines(idle: 1, total: 3, clock: clock).watch(started: sent, heard: heard) {
            passed.add($0)
        }
        return (watch, passed)
    }

    @Test func aWatchPassesTheDeadlineItsClockReachesOnce() {
        let clock = ManualWallClock(start: sent)
        let heard = HeardTime()
        let (watch, passed) = watch(clock, heard)
        #expect(clock.nextWake == at(1))
        heard.heard(at: at(0.5))
        clock.advance(to: at(1))
        // Heard at 0.5 s: quiet until 1.5 s only.
        #expect(clock.nextWake == at(1.5) && passed.all.isEmpty)
        clock.advance(to: at(1.5))
        clock.advance(to: at(5))
        #expect(passed.all == [.stopped(.stalled(seconds: 1))], "once, and not the total deadline after it")
        #expect(watch.passed == .stopped(.stalled(seconds: 1)) && clock.sleeping == 0)
    }

    /// A busy cooperative pool can resume the request's task long after the event loop saw the whole answer.
    @Test func anAnswerThatEndedBeforeTheDeadlineIsKept() {
        let clock = ManualWallClock(start: sent)
        let heard = HeardTime()
        let (watch, passed) = watch(clock, heard)
        heard.end()
        clock.advance(to: at(10))
        #expect(passed.all.isEmpty && watch.passed == nil)
    }

    /// A request sent again (its connection was refused) late in its exchange, on a loaded machine.
    @Test func aRequestSentAgainHasItsOwnIdleDeadlineAndTheExchangesTotalOne() throws {
        let clock = ManualWallClock(start: at(9))
        let resent = HeardAccumulator(
            request: try HTTPClient.Request(url: "http://127.0.0.1:1/"), maxBodySize: 1, clock: clock)
        let passed = Passes()
        let watch = ExchangeDeadlines(idle: 1, total: 30, clock: clock).watch(started: sent, heard: resent.heard) {
            passed.add($0)
        }
        #expect(clock.nextWake == at(10) && passed.all.isEmpty, "idle from the resend at 9 s, not from 0 s")
        clock.advance(to: at(10))
        #expect(passed.all == [.stopped(.stalled(seconds: 1))])
        watch.stop()
    }

    @Test func aStoppedWatchPassesNothingAndLeavesNoTimer() {
        let clock = ManualWallClock(start: sent)
        let (watch, passed) = watch(clock, HeardTime())
        watch.stop()
        #expect(clock.sleeping == 0)
        clock.advance(to: at(10))
        #expect(passed.all.isEmpty)
    }
}
