import Foundation

/// The token a ``TokenCommand`` gave, run again when it is first needed, when the service refused
/// the token (401), and a minute before a JWT's `exp`. Concurrent requests that need a new token
/// (a push window meeting one 401) share one run of the command.
actor TokenSupply {
    let command: TokenCommand
    /// How long before `exp` a token is replaced.
    static let renewBefore: TimeInterval = 60
    /// What the command's deadline and the tokens' expiry are read on.
    private let clock: any WallClock
    private var token: String?
    private var running: Task<String, any Error>?

    init(_ command: TokenCommand, clock: any WallClock = SystemWallClock()) {
        self.command = command
        self.clock = clock
    }

    /// The token to send now.
    func current() async throws(SyncError) -> String {
        if let token, !expiresSoon(token) { return token }
        return try await renew()
    }

    /// A new token after the service refused `sent`; the current one when another request has
    /// renewed it since `sent` went out.
    func refused(_ sent: String) async throws(SyncError) -> String {
        if let token, token != sent { return token }
        token = nil
        return try await renew()
    }

    private func expiresSoon(_ token: String) -> Bool {
        guard let expiry = JWTExpiry.expiry(of: token) else { return false }
        return expiry.timeIntervalSince(clock.now) < Self.renewBefore
    }

    private func renew() async throws(SyncError) -> String {
        let task: Task<String, any Error>
        if let running {
            task = running
        } else {
            let (command, clock) = (command, clock)
            // Unstructured: one run of the command serves every request waiting for a token, not
            // only the one that started it.
            task = Task { try await command.run(on: clock) }
            running = task
        }
        do {
            // The requests waiting belong to one sync: cancelling it stops the command.
            let value = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
            if running == task { running = nil }
            token = value
            return value
        } catch {
            if running == task { running = nil }
            if let error = error as? SyncError { throw error }
            throw .stopped(.cancelled)
        }
    }
}
