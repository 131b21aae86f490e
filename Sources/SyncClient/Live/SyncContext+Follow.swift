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

extension SyncContext {
    /// Follows the remote's change channel for `table` until the task is cancelled: `changed` runs
    /// after each change the service announces to this client (and at once when the client is
    /// behind on connecting or reconnecting), for the caller to pull. A dropped stream is opened
    /// again with a growing pause (½ s doubling to 30 s), resumed from the last cursor it saw, so
    /// nothing is missed; `connected` tells when the stream goes up or down.
    ///
    /// A cursor the service refuses (its database is another one now: restored from a backup) is
    /// dropped: the stream is opened again from the service's present, after `changed` (the
    /// client pulls what it may have missed).
    ///
    /// In offline mode, or without a remote, it waits and looks again. A refused sign-in ends it
    /// (asking again with the same token would only hammer the service). A remote without the
    /// channel is asked once while the context is open, and again for another address: not kept in
    /// the store, since a service may offer the channel after a restart or an upgrade.
    public nonisolated func followChanges(
        of table: String, connected: @escaping @Sendable (Bool) -> Void = { _ in },
        changed: @escaping @Sendable () async -> Void
    ) async -> FollowEnd {
        var cursor: String?
        var failures = 0
        var up = false
        while !Task.isCancelled {
            var pause: TimeInterval?
            if let transport = await liveTransport() {
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
    func liveTransport() -> HTTPTransport? {
        monitor.offline ? nil : transport
    }
}
