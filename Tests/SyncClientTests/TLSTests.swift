import Foundation
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// HTTPS to a service whose certificate a CA of its own signed (made for the test): trusted with
/// `--ca-file`, refused without it, nothing sent and the queue kept.
@Suite(.timeLimit(.minutes(10))) struct TLSTests {
    @Test func aServiceWithItsOwnCAIsReachedWithTheCAFileAndRefusedWithout() async throws {
        let folder = try TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let service = try await TestService.sqlite(in: folder, tls: certificates.server)
        #expect(service.url.hasPrefix("https://127.0.0.1:"))
        _ = try await TableClient(base: service.url, caFile: certificates.caFile).insert(["id": "there", "text": "x"])

        let refused = try SyncContext(
            path: folder.file("refused.sqlite"), configuration: .init(remoteURL: service.endpoint))
        try await refused.table("todoitem").insert(["id": "a", "text": "kept"])
        let error = await #expect(throws: SyncError.self) { try await refused.push() }
        guard case .stopped(.certificateRefused(let host, _))? = error else {
            Issue.record("stopped by \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1" && error?.description.contains("--ca-file") == true)
        #expect(try refused.status().pending == 1)

        var configuration = SyncConfiguration(remoteURL: service.endpoint)
        configuration.caFile = certificates.caFile
        let trusted = try SyncContext(path: folder.file("refused.sqlite"), configuration: configuration)
        #expect(try await trusted.push().pushed.count == 1)
        try await trusted.table("todoitem").pull(queryId: "all")
        #expect(try trusted.table("todoitem").item(id: "there") != nil)
        await service.stop()
    }
}

extension TLSTests {
    /// Anyone on the way could read a key or a token sent in plain HTTP to another machine.
    @Test func secretsAreNotSentInPlainHTTPToAnotherMachineUnlessAllowed() async throws {
        let folder = try TemporaryFolder()
        // TEST-NET-1: never reached by the refusal, which comes before any connection.
        let elsewhere = URL(string: "http://192.0.2.1:9")!
        var configuration = SyncConfiguration(remoteURL: elsewhere, requestTimeout: 0.5)
        configuration.authToken = "a-token-for-elsewhere"
        let clock = ManualWallClock()
        configuration.clock = clock
        let context = try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
        try await context.table("todoitem").insert(["id": "a", "text": "kept"])
        let error = await #expect(throws: SyncError.self) { try await context.push() }
        #expect(error == SyncError.stopped(.plainHTTPRefused(host: "192.0.2.1")))
        #expect(error?.description.contains("--allow-plain-http") == true)
        #expect(try context.exchanges().exchanges.isEmpty, "nothing was sent")
        try await context.close()

        configuration.allowPlainHTTP = true
        let allowed = try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
        let sent = await clock.passingEveryDeadline {
            await #expect(throws: SyncError.self) { try await allowed.push() }
        }
        #expect(sent != SyncError.stopped(.plainHTTPRefused(host: "192.0.2.1")), "allowed: it tried")
        #expect(try allowed.status().pending == 1)
    }
}

extension TLSTests {
    /// The certificate changes mid-pull (another CA's: a misconfigured balancer, or someone in the
    /// middle): the pull stops with a typed error naming the host, the pages received are kept, and
    /// once the service's own certificate is back the next pull brings the rest.
    @Test func aCertificateThatChangesMidPullStopsItAndLosesNothing() async throws {
        let (folder, impostorFolder) = (try TemporaryFolder(), try TemporaryFolder())
        let certificates = try TestCertificates(in: folder)
        let service = try await TestService.sqlite(in: folder, tls: certificates.server)
        let impostor = try await TestService.sqlite(
            in: impostorFolder, tls: try TestCertificates(in: impostorFolder).server)
        try await TableClient(base: service.url, caFile: certificates.caFile).seed(400)
        let relay = try await TCPRelay(to: service.port)
        var configuration = SyncConfiguration(remoteURL: URL(string: "https://127.0.0.1:\(relay.port)")!)
        configuration.caFile = certificates.caFile
        let context = try SyncContext(path: folder.file("store.sqlite"), configuration: configuration)
        try await context.table("todoitem").insert(["id": "mine", "text": "queued before the change"])

        // Pages of 50 rows are about 8 KB: the move comes a few pages in.
        relay.move(to: impostor.port, afterSending: 20_000)
        let error = await #expect(throws: SyncError.self) {
            try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 50))
        }
        guard case .stopped(.certificateRefused(let host, _))? = error else {
            Issue.record("stopped by \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1" && error?.description.contains("--ca-file") == true)
        let kept = try context.table("todoitem").count()
        #expect(kept > 1 && kept < 401, "the pages received before the change are kept: \(kept)")

        relay.move(to: service.port, afterSending: 0)
        try await context.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 50))
        #expect(try context.table("todoitem").count() == 401)
        #expect(try await TableClient(base: service.url, caFile: certificates.caFile).get("todoitem", "mine") != nil)
        try await context.close()
        await relay.stop()
        await impostor.stop()
        await service.stop()
    }
}
