import Foundation
import Synchronization

/// How many pages follow the store now: each page's stream counts itself while it runs, so that a test
/// can wait until a page that went away has stopped following (and a gauge could show it).
final class FollowingPages: Sendable {
    private struct State {
        var count = 0
        var waiters: [UUID: (wanted: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    }
    private let state = Mutex(State())

    /// The streams open now.
    var count: Int { state.withLock { $0.count } }

    /// Counts a stream for as long as `body` runs.
    func counting(_ body: () async -> Void) async {
        change(by: 1)
        await body()
        change(by: -1)
    }

    private func change(by delta: Int) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += delta
            let ready = state.waiters.filter { $0.value.wanted == state.count }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once exactly `wanted` streams are open (at once if they are), or when the waiting
    /// task is cancelled.
    func wait(until wanted: Int) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.count == wanted || Task.isCancelled { return true }
                    state.waiters[id] = (wanted, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}
