import Foundation
import HTTPServer
import SyncProtocol
import TableService
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
        // Kept with the remote: not asked again.
        await server.server.stop()
        #expect(await context.followChanges(of: "todoitem") {} == .notOffered(status: 404))
    }
}

extension FollowChangesTests {
    /// Through a link that goes down and comes back, the stream is opened again from its cursor: the
    /// row written while it was down is announced at once (the client is behind).
    @Test func aDroppedStreamResumesFromItsCursorAndMissesNothing() async throws {
        let service = try await TestService.sqlite(in: try TemporaryFolder())
        _ = try await service.rest.insert(["id": "before", "text": "there before"])
        let proxy = try await service.proxy()
        let context = try SyncContext.temporary(in: TemporaryFolder(), remote: proxy.endpoint)
        let (ups, up) = AsyncStream<Bool>.makeStream()
        let (wakes, woken) = AsyncStream<Void>.makeStream()
        let follower = Task {
            await context.followChanges(of: "todoitem", connected: { up.yield($0) }) { woken.yield() }
        }
        var connections = ups.makeAsyncIterator()
        var wakeUps = wakes.makeAsyncIterator()
        #expect(await connections.next() == true)
        // Subscribed from the start of the table: told at once of the row there before.
        _ = await wakeUps.next()
        try await proxy.refuseConnections(true)
        #expect(await connections.next() == false)
        _ = try await service.rest.insert(["id": "while-away", "text": "written while the stream was down"])
        try await proxy.refuseConnections(false)
        #expect(await connections.next() == true)
        // Resumed from the cursor of "before": behind, so told at once.
        _ = await wakeUps.next()
        follower.cancel()
        #expect(await follower.value == .cancelled)
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
        let (ups, up) = AsyncStream<Bool>.makeStream()
        let (wakes, woken) = AsyncStream<Void>.makeStream()
        let follower = Task {
            await context.followChanges(of: "todoitem", connected: { up.yield($0) }) { woken.yield() }
        }
        var connections = ups.makeAsyncIterator()
        var wakeUps = wakes.makeAsyncIterator()
        #expect(await connections.next() == true)
        _ = await wakeUps.next()  // told of the rows there (the cursor is now that of "c")
        await first.stop()
        #expect(await connections.next() == false)
        let restored = try await TestService(
            TableService.Configuration(
                database: .sqlite(path: try TemporaryFolder().file("service.sqlite")), tables: ["todoitem"]),
            port: first.port)
        #expect(await connections.next() == true)
        _ = await wakeUps.next()  // the refused cursor: pull
        _ = try await restored.rest.insert(["id": "after"])
        _ = await wakeUps.next()  // followed from the present
        follower.cancel()
        #expect(await follower.value == .cancelled)
        await restored.stop()
    }

    @Test func aStreamThatKeepsDroppingIsOpenedAgainEachTime() async throws {
        let service = try await TestService.sqlite(in: try TemporaryFolder())
        let proxy = try await service.proxy(plan: .always(.dropResponse))
        let context = try SyncContext.temporary(in: TemporaryFolder(), remote: proxy.endpoint)
        let (ups, up) = AsyncStream<Bool>.makeStream()
        let follower = Task { await context.followChanges(of: "todoitem", connected: { up.yield($0) }) {} }
        var connections = ups.makeAsyncIterator()
        _ = try await service.rest.insert(["id": "a"])
        for _ in 0..<2 {
            #expect(await connections.next() == true)
            #expect(await connections.next() == false)
        }
        follower.cancel()
        _ = await follower.value
        await proxy.stop()
        await service.stop()
    }
}
