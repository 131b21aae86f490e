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

    /// Runs `todosync arguments…` and waits for it without holding a thread.
    public static func run(_ arguments: [String]) async throws -> Run {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build todosync first")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        async let ended: Int32 = withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try ProcessLaunch.run(process) } catch { continuation.resume(throwing: error) }
        }
        // Read while it runs (a full pipe would stop it), on threads outside the cooperative pool.
        async let printed = readAll(output)
        async let complained = readAll(errors)
        let status = try await ended
        return Run(
            status: status, output: String(decoding: await printed, as: UTF8.self),
            errors: String(decoding: await complained, as: UTF8.self))
    }

    private static func readAll(_ pipe: Pipe) async -> Data {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: pipe.fileHandleForReading.readDataToEndOfFile())
            }
        }
    }
}
