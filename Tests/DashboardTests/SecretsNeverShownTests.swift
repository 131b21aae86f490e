import Dashboard
import Foundation
import TableService
import TestSupport
import Testing

/// The application key and the sign-in token appear in nothing a person, a terminal or a log sees:
/// no line `todosync client` prints (standard output or error, on success or failure), no recorded
/// exchange, no history event, no byte of the store or of a support bundle.
@Suite(.timeLimit(.minutes(10))) struct SecretsNeverShownTests {
    static let signIn = SignIn(secret: "a-secrets-test-secret-of-32-chars", required: true, perUserTables: ["todoitem"])
    static let key = "application-key-never-shown-81c2"

    /// A script that prints `token`, as `--auth-token-command` runs it.
    static func tokenCommand(printing token: String, in folder: TemporaryFolder, name: String) throws -> String {
        let file = folder.file(name + ".token")
        try token.write(toFile: file, atomically: true, encoding: .utf8)
        let script = folder.file(name + ".sh")
        try "#!/bin/sh\ncat '\(file)'\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: script)
        return script
    }

    @Test func theKeyAndTheTokenAppearInNoOutputRecordHistoryOrBundle() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let service = try await TestService.sqlite(in: folder) { configuration in
            configuration.applicationKey = Self.key
            configuration.signIn = Self.signIn
        }
        let token = try await TokenIssuer.token(for: "alice", signIn: Self.signIn)
        let forged = try await TokenIssuer.token(
            for: "alice", signIn: SignIn(secret: "another-secret-of-at-least-32-chars!"))
        let store = folder.file("alice.sqlite")
        let signedIn = [
            "--remote", service.endpoint.absoluteString, "--app-key", Self.key,
            "--auth-token-command", try Self.tokenCommand(printing: token, in: folder, name: "good"),
        ]
        let bundle = folder.file("support.zip")
        var runs: [(arguments: [String], run: TodosyncCommand.Run)] = []
        func client(_ arguments: [String], succeeds: Bool = true) async throws {
            let run = try await TodosyncCommand.run(["client", "--store", store] + arguments)
            #expect((run.status == 0) == succeeds, "\(arguments): \(run.errors)")
            runs.append((arguments, run))
        }

        try await client(signedIn + ["add", "--id", "milk", "buy milk"])
        try await client(signedIn + ["push"])
        try await client(signedIn + ["edit", "milk", "--text", "buy oat milk"])
        try await client(signedIn + ["pull", "--query-id", "all"])
        try await client(signedIn + ["verify"])
        try await client(["history", "milk"])
        try await client(["history", "milk", "--json"])
        try await client(["log", "--bodies"])
        try await client(["log", "--bodies", "--json"])
        try await client(["queue"])
        try await client(["status", "--json"])
        // Refused: the service says 401 to a token it did not sign, and the error is printed.
        let refused = ["--auth-token-command", try Self.tokenCommand(printing: forged, in: folder, name: "forged")]
        try await client(refused + ["add", "--id", "bread", "buy bread"])
        try await client(refused + ["push"], succeeds: false)
        try await client(["bundle", "--out", bundle])

        let secrets = [Self.key, token, forged]
        #expect(runs.contains { $0.run.errors.contains("401") || $0.run.errors.contains("sign-in") })
        for (arguments, run) in runs {
            for secret in secrets {
                #expect(!run.output.contains(secret) && !run.errors.contains(secret), "\(arguments)")
            }
        }
        let opened = try SupportBundle.open(URL(fileURLWithPath: bundle), under: folder.url)
        let files = try FileManager.default.subpathsOfDirectory(atPath: opened.folder.path)
        #expect(!files.isEmpty)
        for file in files {
            let bytes = FileManager.default.contents(atPath: opened.folder.appendingPathComponent(file).path) ?? Data()
            for secret in secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file)") }
        }
        for suffix in ["", "-wal", "-shm"] {
            let bytes = FileManager.default.contents(atPath: store + suffix) ?? Data()
            for secret in secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "the store\(suffix)") }
        }
        await service.stop()
    }
}
