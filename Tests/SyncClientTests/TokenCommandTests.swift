import FaultProxy
import Foundation
import NIOHTTP1
import Synchronization
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// `--auth-token-command`: tokens from a program, renewed after a 401 and before they expire; a
/// command that fails says so by name, and the queue is kept.
@Suite(.timeLimit(.minutes(10))) struct TokenCommandTests {
    static let signIn = SignIn(secret: "a-test-secret-of-32-characters!!", required: true)

    /// A command that prints the next of `count` distinct tokens for alice at each run, and the
    /// file counting its runs.
    static func issuingCommand(in folder: TemporaryFolder, count: Int) async throws -> (TokenCommand, String) {
        for index in 0..<count {
            // Each issued a second apart, so that no two are the same.
            let token = try await TokenIssuer.token(
                for: "alice", signIn: signIn, lifetime: .seconds(3600), now: Date() - Double(index))
            try token.write(toFile: folder.file("token.\(index)"), atomically: true, encoding: .utf8)
        }
        let runs = folder.file("runs")
        let script =
            "n=$(cat '\(runs)' 2>/dev/null || echo 0); echo $((n + 1)) > '\(runs)'; cat '\(folder.file("token."))'$n"
        return (TokenCommand(script), runs)
    }

    /// Answers 401 to a token's 21st request, as a service whose tokens last 20 requests.
    static func expiringAfter(_ uses: Int, _ proxy: FaultProxy) {
        let seen = Mutex<[String: Int]>([:])
        proxy.intercept { request, _ in
            let token = request.header("X-ZUMO-AUTH") ?? request.header("Authorization") ?? ""
            let count = seen.withLock { seen in
                seen[token, default: 0] += 1
                return seen[token] ?? 0
            }
            guard count > uses else { return nil }
            return .answer(
                ProxiedResponse(
                    status: 401, headers: ["Content-Type": "application/json"],
                    body: Array(#"{"error":"The token expired."}"#.utf8)))
        }
    }

    @Test func aPushOf200ChangesRunsTheCommandAgainWhenEachTokenExpires() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, signIn: Self.signIn)
        let proxy = try await service.proxy()
        Self.expiringAfter(20, proxy)
        let (command, runs) = try await Self.issuingCommand(in: folder, count: 40)
        var configuration = SyncConfiguration(remoteURL: proxy.endpoint)
        configuration.authTokenCommand = command
        let context = try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
        for index in 0..<200 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "x"]) }

        let result = try await context.push()
        #expect(result.pushed.count == 200 && result.failed.isEmpty)
        #expect(try context.operations.all().isEmpty)
        let ran = Int(try String(contentsOfFile: runs, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect((ran ?? 0) >= 10, "each token serves 20 requests")
        // In memory only: neither the store nor the file beside it holds a token.
        #expect(!FileManager.default.fileExists(atPath: folder.file("store.sqlite.credentials")))
        await proxy.stop()
        await service.stop()
    }

    @Test func aServiceThatRefusesEveryNewTokenStopsThePushAfterAFewRunsAndKeepsTheQueue() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, signIn: Self.signIn)
        let proxy = try await service.proxy()
        Self.expiringAfter(0, proxy)
        let (command, runs) = try await Self.issuingCommand(in: folder, count: 10)
        var configuration = SyncConfiguration(remoteURL: proxy.endpoint)
        configuration.authTokenCommand = command
        let context = try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
        try await context.table("todoitem").insert(["id": "a", "text": "kept"])

        let error = await #expect(throws: SyncError.self) { try await context.push() }
        guard case .stopped(.notAuthorized(_, _))? = error else {
            Issue.record("stopped by \(String(describing: error))")
            return
        }
        let ran = Int(try String(contentsOfFile: runs, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(ran == 1 + HTTPTransport.maximumRenewals, "the first token, then one run per renewal")
        #expect(try context.status().pending == 1)
        await proxy.stop()
        await service.stop()
    }

    @Test(arguments: [
        ("echo 'no account' >&2; exit 3", "exited with status 3: no account"),
        ("true", "printed nothing"),
        ("echo not-a-token", "is not a JSON Web Token"),
        ("sleep 30", "did not finish within 1 s"),
    ])
    func aCommandThatGivesNoTokenStopsTheSyncNamingItAndKeepsTheQueue(script: String, detail: String) async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder, signIn: Self.signIn)
        var configuration = SyncConfiguration(remoteURL: service.endpoint)
        configuration.authTokenCommand = TokenCommand(script, deadline: 1)
        // The command's deadline is on a clock the test moves, once the command runs (its deadline
        // is the only thing that sleeps on it before the token is there).
        let clock = ManualWallClock()
        configuration.clock = clock
        let context = try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
        try await context.table("todoitem").insert(["id": "a", "text": "kept"])
        let pushing = Task { try await context.push() }
        if script.hasPrefix("sleep") {
            await clock.someoneSleeps()
            clock.advance(by: 1)
        }
        let error = await #expect(throws: SyncError.self) { try await pushing.value }
        guard case .stopped(.tokenCommandFailed(let named, let said))? = error else {
            Issue.record("stopped by \(String(describing: error))")
            return
        }
        #expect(named == script && said.contains(detail))
        #expect(error?.description.contains("--auth-token-command") == true)
        #expect(try context.status().pending == 1)
        await service.stop()
    }

    @Test func aTokenAboutToExpireIsRenewedBeforeItIsSent() async throws {
        let soon = try await TokenIssuer.token(for: "alice", signIn: Self.signIn, lifetime: .seconds(30))
        let later = try await TokenIssuer.token(for: "alice", signIn: Self.signIn, lifetime: .seconds(3600))
        #expect(JWTExpiry.expiry(of: soon).map { $0.timeIntervalSinceNow < 60 } == true)
        #expect(JWTExpiry.expiry(of: later).map { $0.timeIntervalSinceNow > 60 } == true)
        #expect(!JWTExpiry.isJWT("a.b.c") && JWTExpiry.isJWT(later))
        let folder = try TemporaryFolder()
        try soon.write(toFile: folder.file("first"), atomically: true, encoding: .utf8)
        try later.write(toFile: folder.file("second"), atomically: true, encoding: .utf8)
        // Prints `first` the first time, `second` afterwards.
        let marker = folder.file("ran")
        let supply = TokenSupply(
            TokenCommand(
                "if [ -e '\(marker)' ]; then cat '\(folder.file("second"))'; else touch '\(marker)'; "
                    + "cat '\(folder.file("first"))'; fi"))
        #expect(try await supply.current() == soon)
        #expect(try await supply.current() == later, "within a minute of its exp, a token is renewed before use")
        #expect(try await supply.current() == later, "kept while it lasts")
    }
}
