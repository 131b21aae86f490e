import Foundation
import TestSupport
import Testing

@testable import SyncClient

/// The two deadlines of an exchange, as a rule and on a clock the test moves.
@Suite(.timeLimit(.minutes(1))) struct ExchangeDeadlinesTests {
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

    @Test func aWatchEndsWithTheDeadlineThatPassedOnItsClock() async {
        let clock = ManualWallClock(start: sent)
        let watched = ExchangeDeadlines(idle: 1, total: 3, clock: clock)
        let heard = HeardTime()
        let watch = Task { await watched.watch(started: sent, heard: heard) }
        await clock.someoneSleeps()
        heard.heard(at: at(0.5))
        clock.advance(to: at(1))
        // Heard at 0.5 s: quiet until 1.5 s only.
        await clock.someoneSleeps()
        #expect(clock.nextWake == at(1.5))
        clock.advance(to: at(1.5))
        #expect(await watch.value == .stopped(.stalled(seconds: 1)))
    }

    /// A busy cooperative pool can wake the watch long after the event loop saw the whole answer.
    @Test func anAnswerThatEndedBeforeTheWatchWokeIsKept() async {
        let clock = ManualWallClock(start: sent)
        let heard = HeardTime()
        let watch = Task { await ExchangeDeadlines(idle: 1, total: 3, clock: clock).watch(started: sent, heard: heard) }
        await clock.someoneSleeps()
        heard.end()
        clock.advance(to: at(10))
        #expect(await watch.value == nil)
    }

    @Test func aCancelledWatchEndsWithoutAnError() async {
        let clock = ManualWallClock(start: sent)
        let watch = Task {
            await ExchangeDeadlines(idle: 1, total: 3, clock: clock).watch(started: sent, heard: HeardTime())
        }
        await clock.someoneSleeps()
        watch.cancel()
        #expect(await watch.value == nil)
    }
}
