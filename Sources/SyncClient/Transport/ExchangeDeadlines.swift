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
/// ``verdict(started:lastHeard:now:)`` is the rule; ``bounding(started:heard:_:)`` applies it on
/// the clock. A test gives a clock it moves, so no test waits for a deadline to pass.
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

    /// Runs `work`, the exchange sent at `started` (or a part of it), which tells `heard` of each
    /// byte it receives, until it ends or a deadline passes: then `work` is cancelled, and the
    /// deadline's error thrown.
    func bounding<T: Sendable>(
        started: Date, heard: HeardTime, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                if let passed = await watch(started: started, heard: heard) { throw passed }
                return nil
            }
            defer { group.cancelAll() }
            // The watch returns nil only once cancelled: then `work` ends too, with its answer or error.
            for try await next in group {
                if let value = next { return value }
            }
            throw CancellationError()
        }
    }

    /// Waits on the clock until a deadline of the exchange sent at `started` passes, and returns its
    /// error; returns nil when cancelled first, or when the answer had ended by then (complete or
    /// failed, as the event loop saw it: a busy cooperative pool may wake this watch and resume the
    /// request's task only long after the answer came, and that answer is kept).
    func watch(started: Date, heard: HeardTime) async -> SyncError? {
        while !heard.ended {
            switch verdict(started: started, lastHeard: heard.last ?? started, now: clock.now) {
            case .waitUntil(let time):
                guard (try? await clock.sleep(until: time)) != nil else { return nil }
            case .stalled: return heard.ended ? nil : .stopped(.stalled(seconds: idle))
            case .tooSlow: return heard.ended ? nil : .stopped(.tooSlow(seconds: total))
            }
        }
        return nil
    }
}

/// When the last byte of an answer came, and whether it ended, written as bytes arrive and read by
/// ``ExchangeDeadlines/watch(started:heard:)``.
final class HeardTime: Sendable {
    private let state = Mutex<(last: Date?, ended: Bool)>((nil, false))

    /// The last byte's time; nil before the first.
    var last: Date? { state.withLock { $0.last } }

    /// Whether the answer is complete, or the exchange failed.
    var ended: Bool { state.withLock { $0.ended } }

    func heard(at date: Date) { state.withLock { $0.last = date } }

    func end() { state.withLock { $0.ended = true } }
}
