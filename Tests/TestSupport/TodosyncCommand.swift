import Foundation
import SyncClient
import Testing

/// The `todosync` command built beside the tests (`swift build --build-tests` builds it), run as a
/// script runs it.
public enum TodosyncCommand {
    /// The debug build's executable.
    public static let binary = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/debug/todosync").path

    /// What one run printed and how it ended.
    public struct Run: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
    }

    /// Runs `todosync arguments…` and waits for it without holding a thread (at most two minutes).
    public static func run(_ arguments: [String]) async throws -> Run {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build todosync first")
        let outcome = try await ProcessOutcome.run([binary] + arguments, deadline: 120)
        try #require(!outcome.timedOut, "todosync \(arguments) ran past two minutes")
        return Run(status: outcome.status, output: outcome.standardOutput, errors: outcome.standardError)
    }
}
