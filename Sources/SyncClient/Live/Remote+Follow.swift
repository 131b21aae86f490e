import Foundation

/// Whether todosync follows the remote's change channel (`--live`).
public enum LiveMode: String, Sendable, CaseIterable, Codable {
    /// When the remote offers the channel (todosync serve); polling otherwise.
    case auto
    /// Follow the channel; a remote without one is an error worth seeing.
    case on
    /// Never subscribe: auto-sync polls at its interval.
    case off
}

/// Why ``SyncContext/followChanges(of:connected:changed:)`` returned.
public enum FollowEnd: Sendable, Equatable {
    /// The remote has no change channel (it answered this status): poll instead.
    case notOffered(status: Int)
    /// The service refused the sign-in (401): following again needs another token.
    case signInRefused
    /// The task was cancelled.
    case cancelled
}

extension Remote {
    /// See ``SyncContext/followChanges(of:connected:changed:)``.
    func followChanges(
        of table: String, connected: @escaping @Sendable (Bool) -> Void, changed: @escaping @Sendable () async -> Void
    ) async -> FollowEnd {
        var cursor: String?
        var failures = 0
        var up = false
        while !Task.isCancelled {
            var pause: TimeInterval?
            if let transport = liveTransport {
                let remote = transport.baseURL.absoluteString
                if let absence = monitor.channelAbsence, absence.address == remote {
                    return .notOffered(status: absence.status)
                }
                do {
                    switch try await transport.openChanges(table: table, after: cursor) {
                    case .notOffered(let status):
                        monitor.channelAbsence = (remote, status)
                        return .notOffered(status: status)
                    case .refused(_, let retryAfter):
                        pause = retryAfter
                    case .cursorRefused:
                        cursor = nil
                        await changed()
                        continue
                    case .stream(let cursors):
                        up = true
                        connected(true)
                        failures = 0
                        for try await next in cursors {
                            cursor = next
                            await changed()
                        }
                    }
                } catch SyncError.stopped(.notAuthorized) {
                    if up { connected(false) }
                    return .signInRefused
                } catch {}
                if up { connected(false) }
                up = false
            }
            guard !Task.isCancelled else { break }
            failures += 1
            let wait = pause ?? min(30, 0.5 * pow(2, Double(min(failures - 1, 10)))) * Double.random(in: 0.5...1)
            guard (try? await deadlines.clock.sleep(until: deadlines.clock.now.addingTimeInterval(wait))) != nil else {
                break
            }
        }
        return .cancelled
    }

    /// The transport to subscribe with: none in offline mode or without a remote.
    private var liveTransport: HTTPTransport? {
        monitor.offline ? nil : transport
    }
}
