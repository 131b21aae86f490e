import Foundation
import Synchronization

/// Progress and last result, shared without the actor: readers never wait for a running sync.
/// The plain values (``Values``) read and write through one lock as `monitor.offline`; progress
/// changes only through ``update(_:)``, which tells its watchers.
@dynamicMemberLookup
final class SyncMonitor: Sendable {
    struct Values: Sendable {
        var lastSync: SyncSummary?
        var offline = false
        var remote: String?
        var tableProtocol: TableProtocol?
        var protocolChoice = ProtocolChoice.v2
        var authTokenHint: AuthTokenHint?
        /// A remote found without a change channel, and the status it answered.
        var channelAbsence: (address: String, status: Int)?
    }

    private struct State {
        var values = Values()
        var progress = SyncProgress.idle
        var watchers: [UUID: AsyncStream<SyncProgress>.Continuation] = [:]
    }

    private let state = Mutex(State())

    subscript<Value: Sendable>(dynamicMember key: WritableKeyPath<Values, Value>) -> Value {
        get { state.withLock { $0.values[keyPath: key] } }
        set { state.withLock { $0.values[keyPath: key] = newValue } }
    }

    var progress: SyncProgress { state.withLock { $0.progress } }

    func update(_ change: (inout SyncProgress) -> Void) {
        let (progress, watchers) = state.withLock { state -> (SyncProgress, [AsyncStream<SyncProgress>.Continuation]) in
            change(&state.progress)
            return (state.progress, Array(state.watchers.values))
        }
        for watcher in watchers { watcher.yield(progress) }
    }

    func updates() -> AsyncStream<SyncProgress> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SyncProgress.self, bufferingPolicy: .bufferingNewest(1))
        let key = UUID()
        let current = state.withLock { state -> SyncProgress in
            state.watchers[key] = continuation
            return state.progress
        }
        continuation.yield(current)
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.watchers.removeValue(forKey: key) }
        }
        return stream
    }

    func finishAll() {
        let watchers = state.withLock { state in
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.finish() }
    }
}
