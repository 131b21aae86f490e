import FaultProxy
import Foundation
import HTTPServer
import SyncProtocol
import TableService
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10))) struct FollowChangesTests {
    /// The official Mobile Apps server answers 404 for `/tables/{table}/$changes` (no such item).
    @Test func aServiceWithoutTheChannelIsToldApart() async throws {
        let server = try TestHTTPServer { _ in }
        let context = try SyncContext.temporary(in: TemporaryFolder(), remote: URL(string: server.server.url)!)
        let end = await context.followChanges(of: "todoitem") {}
        #expect(end == .notOffered(status: 404))
        // Kept with the remote: not asked again.
        await server.server.stop()
        #expect(await context.followChanges(of: "todoitem") {} == .notOffered(status: 404))
    }
}

extension FollowChangesTests {
    /// A remote that answered without the channel is asked again by the next context on the store
    /// (after a restart): the service may offer it now, upgraded, or with the table it lacked.
    @Test func aRemoteWithoutTheChannelIsAskedAgainAfterARestart() async throws {
        let service = try await TestService.sqlite(in: try TemporaryFolder())
        let proxy = try await service.proxy()
        proxy.intercept { request, _ in
            request.path.hasSuffix("/$changes") ? .answer(ProxiedResponse(status: 404)) : nil
        }
        let folder = try TemporaryFolder()
        let before = try SyncContext.temporary(in: folder, remote: proxy.endpoint)
        #expect(await before.followChanges(of: "todoitem") {} == .notOffered(status: 404))
        try await before.close()
        proxy.intercept(nil)
        var follower = Follower(try SyncContext.temporary(in: folder, remote: proxy.endpoint))
        #expect(await follower.connections.next() == true)
        #expect(await follower.stop() == .cancelled)
        await proxy.stop()
        await service.stop()
    }

    /// Through a link that goes down and comes back, the stream is opened again from its cursor: the
    /// row written while it was down is announced at once (the client is behind).
    @Test func aDroppedStreamResumesFromItsCursorAndMissesNothing() async throws {
        let service = try await TestService.sqlite(in: try TemporaryFolder())
        _ = try await service.rest.insert(["id": "before", "text": "there before"])
        let proxy = try await service.proxy()
        let context = try SyncContext.temporary(in: TemporaryFolder(), remote: proxy.endpoint)
        var follower = Follower(context)
        #expect(await follower.connections.next() == true)
        // Subscribed from the start of the table: told at once of the row there before.
        _ = await follower.wakeUps.next()
        try await proxy.refuseConnections(true)
        #expect(await follower.connections.next() == false)
        _ = try await service.rest.insert(["id": "while-away", "text": "written while the stream was down"])
        try await proxy.refuseConnections(false)
        #expect(await follower.connections.next() == true)
        // Resumed from the cursor of "before": behind, so told at once.
        _ = await follower.wakeUps.next()
        #expect(await follower.stop() == .cancelled)
        await proxy.stop()
        await service.stop()
    }

    /// The service comes back on its address with another database (one restored from a backup,
    /// with fewer rows): the client's cursor is past its newest change and refused (400). The
    /// client pulls, subscribes from the service's present and goes on following it.
    @Test func aCursorTheServiceNoLongerKnowsIsDroppedAndFollowingGoesOn() async throws {
        let first = try await TestService.sqlite(in: try TemporaryFolder())
        _ = try await first.rest.insert(["id": "a"])
        _ = try await first.rest.insert(["id": "c"])
        let context = try SyncContext.temporary(in: TemporaryFolder(), remote: first.endpoint)
        var follower = Follower(context)
        #expect(await follower.connections.next() == true)
        _ = await follower.wakeUps.next()  // told of the rows there (the cursor is now that of "c")
        await first.stop()
        #expect(await follower.connections.next() == false)
        let restored = try await TestService(
            TableService.Configuration(
                database: .sqlite(path: try TemporaryFolder().file("service.sqlite")), tables: ["todoitem"]),
            port: first.port)
        #expect(await follower.connections.next() == true)
        _ = await follower.wakeUps.next()  // the refused cursor: pull
        _ = try await restored.rest.insert(["id": "after"])
        _ = await follower.wakeUps.next()  // followed from the present
        #expect(await follower.stop() == .cancelled)
        await restored.stop()
    }

    @Test func aStreamThatKeepsDroppingIsOpenedAgainEachTime() async throws {
        let service = try await TestService.sqlite(in: try TemporaryFolder())
        let proxy = try await service.proxy(plan: .always(.dropResponse))
        let context = try SyncContext.temporary(in: TemporaryFolder(), remote: proxy.endpoint)
        var follower = Follower(context)
        _ = try await service.rest.insert(["id": "a"])
        for _ in 0..<2 {
            #expect(await follower.connections.next() == true)
            #expect(await follower.connections.next() == false)
        }
        _ = await follower.stop()
        await proxy.stop()
        await service.stop()
    }
}

/// A context following `todoitem`'s change channel, with what it tells to wait on.
private struct Follower {
    /// Each time the stream goes up (true) or down (false).
    var connections: AsyncStream<Bool>.Iterator
    /// Each time it would pull.
    var wakeUps: AsyncStream<Void>.Iterator
    private let task: Task<FollowEnd, Never>

    init(_ context: SyncContext) {
        let (ups, up) = AsyncStream<Bool>.makeStream()
        let (wakes, woken) = AsyncStream<Void>.makeStream()
        task = Task { await context.followChanges(of: "todoitem", connected: { up.yield($0) }) { woken.yield() } }
        connections = ups.makeAsyncIterator()
        wakeUps = wakes.makeAsyncIterator()
    }

    /// Cancels the following; how it ended.
    func stop() async -> FollowEnd {
        task.cancel()
        return await task.value
    }
}
