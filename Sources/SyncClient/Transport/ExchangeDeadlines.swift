import Foundation
import Synchronization

/// The two deadlines of every exchange with the service, kept on a ``WallClock``:
///
/// - the idle deadline: no byte of the answer (head or body) for ``idle`` seconds ends the exchange
///   with ``StopReason/stalled(seconds:)``;
/// - the total deadline: an exchange longer than ``total`` seconds, from sending to the last byte of
///   the answer, ends with ``StopReason/tooSlow(seconds:)``, also when the service trickles bytes to
///   stay under the idle deadline. A stream that lasts as long as it is heard (the change channel)
///   has none (``unending``).
///
/// ``verdict(started:lastHeard:now:)`` is the rule; ``watch(started:heard:passed:)`` applies it
/// with the clock's timers. A test gives a clock it moves, so no test waits for a deadline to pass.
struct ExchangeDeadlines: Sendable {
    var idle: TimeInterval
    var total: TimeInterval
    var clock: any WallClock

    init(idle: TimeInterval, total: TimeInterval, clock: any WallClock) {
        self.idle = max(0.001, idle)
        self.total = max(0.001, total)
        self.clock = clock
    }

    /// The same idle deadline, without a total one.
    var unending: ExchangeDeadlines {
        var deadlines = self
        deadlines.total = .infinity
        return deadlines
    }

    /// What becomes of an exchange at a moment.
    enum Verdict: Equatable {
        /// It goes on; nothing can pass before this time.
        case waitUntil(Date)
        /// Nothing was heard for ``ExchangeDeadlines/idle`` seconds.
        case stalled
        /// It took ``ExchangeDeadlines/total`` seconds.
        case tooSlow
    }

    /// The rule: for an exchange sent at `started`, whose answer's last byte came at `lastHeard`
    /// (`started` when none came yet), what `now` makes of it. The total deadline wins when both passed.
    func verdict(started: Date, lastHeard: Date, now: Date) -> Verdict {
        let end = started.addingTimeInterval(total)
        if now >= end { return .tooSlow }
        let quietEnd = max(started, lastHeard).addingTimeInterval(idle)
        if now >= quietEnd { return .stalled }
        return .waitUntil(min(end, quietEnd))
    }

    /// Starts watching the exchange sent at `started`, whose bytes `heard` is told of: `passed` runs
    /// (on a thread of the clock's) with the error of the first deadline that passes before the
    /// answer ends or the watch is stopped.
    func watch(
        started: Date, heard: HeardTime, passed: @escaping @Sendable (SyncError) -> Void
    ) -> ExchangeWatch {
        let watch = ExchangeWatch(deadlines: self, started: started, heard: heard, passed: passed)
        watch.check()
        return watch
    }
}

/// The deadlines of one exchange, checked by a timer of the clock's at the earliest time one could
/// pass (no task waits for them): a watch that finds the answer still coming sets the next timer.
final class ExchangeWatch: Sendable {
    private let deadlines: ExchangeDeadlines
    private let started: Date
    private let heard: HeardTime
    private let onPass: @Sendable (SyncError) -> Void
    private let state = Mutex<(timer: (any ClockTimer)?, stopped: Bool, passed: SyncError?)>((nil, false, nil))

    fileprivate init(
        deadlines: ExchangeDeadlines, started: Date, heard: HeardTime, passed: @escaping @Sendable (SyncError) -> Void
    ) {
        (self.deadlines, self.started, self.heard, onPass) = (deadlines, started, heard, passed)
    }

    /// The deadline that passed; nil while none did.
    var passed: SyncError? { state.withLock { $0.passed } }

    /// No deadline passes after this.
    func stop() {
        state.withLock { state in
            state.stopped = true
            defer { state.timer = nil }
            return state.timer
        }?.cancel()
    }

    /// Applies the rule now: a timer for the earliest time a deadline could pass, or the error of
    /// the one that passed. An answer that ended is kept, however late its task resumes.
    fileprivate func check() {
        guard !heard.ended else { return }
        let clock = deadlines.clock
        let error: SyncError
        switch deadlines.verdict(started: started, lastHeard: heard.last ?? started, now: clock.now) {
        case .waitUntil(let time):
            let timer = clock.schedule(at: time) { [self] in check() }
            let unwanted = state.withLock { state -> (any ClockTimer)? in
                if state.stopped { return timer }
                state.timer = timer
                return nil
            }
            unwanted?.cancel()
            return
        case .stalled: error = .stopped(.stalled(seconds: deadlines.idle))
        case .tooSlow: error = .stopped(.tooSlow(seconds: deadlines.total))
        }
        let fires = state.withLock { state -> Bool in
            guard !state.stopped, state.passed == nil else { return false }
            state.passed = error
            return true
        }
        if fires { onPass(error) }
    }
}

/// When the last byte of an answer came, and whether it ended, written on the event loop as bytes
/// arrive and read by ``ExchangeWatch``.
final class HeardTime: Sendable {
    private let state: Mutex<(last: Date?, ended: Bool)>

    /// `since`: when the request was sent, if later than the exchange's start (a request sent again
    /// after its connection was refused has its own idle deadline; the total one stays the exchange's).
    init(since: Date? = nil) {
        state = Mutex((since, false))
    }

    /// The last byte's time (or the `since` of ``init(since:)``); nil before the first.
    var last: Date? { state.withLock { $0.last } }

    /// Whether the answer is complete, or the exchange failed.
    var ended: Bool { state.withLock { $0.ended } }

    func heard(at date: Date) { state.withLock { $0.last = date } }

    func end() { state.withLock { $0.ended = true } }
}
