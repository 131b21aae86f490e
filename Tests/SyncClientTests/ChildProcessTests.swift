import Testing

@testable import SyncClient

/// Programs started at once (token commands, `todosync` in tests) never hold one another's pipes: a
/// reader would otherwise wait for the end of its program's output as long as another one lives.
struct ChildProcessTests {
    @Test func programsStartedAtOnceInheritNoOtherPipe() async throws {
        let listings = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    // The shell's own descriptors, as it starts: 0, 1 and 2 only.
                    try await ProcessOutcome.run(["/bin/sh", "-c", "ls /proc/$$/fd"], deadline: 60).standardOutput
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for listing in listings {
            #expect(listing.split(separator: "\n").sorted() == ["0", "1", "2"], "\(listing)")
        }
    }
}
