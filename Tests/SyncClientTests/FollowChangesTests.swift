import Foundation
import HTTPServer
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(1))) struct FollowChangesTests {
    /// The official Mobile Apps server answers 404 for `/tables/{table}/$changes` (no such item).
    @Test func aServiceWithoutTheChannelIsToldApart() async throws {
        let server = try TestHTTPServer { _ in }
        let context = try SyncContext.temporary(in: TemporaryFolder(), remote: URL(string: server.server.url)!)
        let end = await context.followChanges(of: "todoitem") {}
        #expect(end == .notOffered(status: 404))
        await server.server.stop()
    }
}
