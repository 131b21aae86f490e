import Foundation

/// `--auth-token-command CMD`: a program whose standard output is the signed-in user's token (for
/// example `az account get-access-token --query accessToken -o tsv`), run by `/bin/sh -c`.
///
/// Its token is kept in memory only: never saved, logged, recorded or bundled.
public struct TokenCommand: Sendable, Hashable {
    /// The command line, as given.
    public var command: String
    /// Longest time the command may take; it is stopped then.
    public var deadline: TimeInterval

    public init(_ command: String, deadline: TimeInterval = 30) {
        self.command = command
        self.deadline = deadline
    }

    /// Runs the command once, with its deadline on `clock`, and reads its token.
    ///
    /// - Throws: ``SyncError/stopped(_:)`` with ``StopReason/tokenCommandFailed(command:detail:)``
    ///   when it fails, hangs past ``deadline``, prints nothing, or prints something that is not a
    ///   JSON Web Token; ``StopReason/cancelled`` when the sync is cancelled meanwhile.
    func run(on clock: any WallClock) async throws(SyncError) -> String {
        let outcome: ProcessOutcome
        do {
            outcome = try await ProcessOutcome.run(["/bin/sh", "-c", command], deadline: deadline, on: clock)
        } catch is CancellationError {
            throw .stopped(.cancelled)
        } catch {
            throw failure("it could not be started (\(error))")
        }
        if outcome.timedOut { throw failure("it did not finish within \(Int(deadline)) s and was stopped") }
        guard outcome.status == 0 else {
            let line = outcome.standardError.split(separator: "\n").first.map { ": " + $0 } ?? ""
            throw failure("it exited with status \(outcome.status)\(line)")
        }
        let token = outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw failure("it printed nothing") }
        guard JWTExpiry.isJWT(token) else { throw failure("what it printed is not a JSON Web Token") }
        return token
    }

    private func failure(_ detail: String) -> SyncError {
        .stopped(.tokenCommandFailed(command: command, detail: detail))
    }
}
