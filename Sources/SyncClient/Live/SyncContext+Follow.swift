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
    /// channel is asked once: the answer is kept in the store with that remote's address, as the
    /// protocol it speaks is, and asked again only for another address.
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
                if let status = knownAbsence(at: remote) { return .notOffered(status: status) }
                do {
                    switch try await transport.openChanges(table: table, after: cursor) {
                    case .notOffered(let status):
                        await rememberAbsence(at: remote, status: status)
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

    /// Where a remote without a change channel is remembered: `address status`.
    static let channelAbsenceKey = "changeChannelAbsent"

    /// The status a remote at `address` answered when it was found to have no channel.
    private nonisolated func knownAbsence(at address: String) -> Int? {
        let saved = try? read { [store] db in try store.config(db, Self.channelAbsenceKey) }
        guard let parts = saved?.split(separator: " "), parts.count == 2, parts[0] == address else { return nil }
        return Int(parts[1])
    }

    private nonisolated func rememberAbsence(at address: String, status: Int) async {
        _ = try? await write { [store] db in try store.setConfig(db, Self.channelAbsenceKey, "\(address) \(status)") }
    }

    /// The transport to subscribe with: none in offline mode or without a remote.
    func liveTransport() -> HTTPTransport? {
        monitor.offline ? nil : transport
    }
}
