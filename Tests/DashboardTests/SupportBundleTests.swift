import Foundation
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// Support bundles: exported from `/settings/bundle` without secrets, served read-only by
/// ``Dashboard/serve(_:host:port:resources:allowedHosts:)``, and refused clearly when damaged.
@Suite(.timeLimit(.minutes(10))) struct SupportBundleTests {
    static let key = "app-KEY-0123456789"
    static let token = "token-SECRET-987654321"

    @Test func aBundleHoldsNoSecretAndOpensReadOnlyWithTheSameListAndQueue() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder) { $0.applicationKey = Self.key }
        let remote = try #require(URL(string: service.running.url))
        let live = try await TestDashboard(remote: .url(remote, applicationKey: Self.key)) {
            $0.authToken = Self.token
        }
        let todos = live.dashboard.context.table("todoitem")
        try await todos.insert(["id": "a", "text": "first"])
        try await todos.insert(["id": "b", "text": "second"])
        #expect(try await live.submit("/sync", [:]).status == 303)
        await live.dashboard.waitUntilIdle()
        #expect(try live.dashboard.context.exchanges().exchanges.count >= 2)
        try await todos.insert(["id": "c", "text": "third, queued"])

        let preview = try await live.client.send(.get, "/settings/bundle")
        #expect(preview.status == 200)
        #expect(preview.text.contains("Export support bundle") && preview.text.contains("todoitem"))
        let export = try await live.submit("/settings/bundle", [:])
        #expect(export.status == 200)
        #expect(export.headers["content-type"] == "application/zip")
        #expect(export.headers["content-disposition"]?.contains("attachment") == true)
        for secret in [Self.key, Self.token] { #expect(export.body.range(of: Data(secret.utf8)) == nil) }

        let file = folder.url.appendingPathComponent("support.zip")
        try export.body.write(to: file)
        let opened = try SupportBundle.open(file, under: folder.url)
        let unpacked = try FileManager.default.contentsOfDirectory(atPath: opened.folder.path)
        for name in unpacked {
            let bytes = try Data(contentsOf: opened.folder.appendingPathComponent(name))
            for secret in [Self.key, Self.token] { #expect(bytes.range(of: Data(secret.utf8)) == nil) }
        }
        #expect(opened.settings.applicationKeyWasSet && opened.settings.signInTokenWasSet)
        #expect(opened.manifest.store.operations == 1)

        let bundle = try await Dashboard.serve(opened, port: 0, resources: ProjectResources.folders)
        let reader = BrowserClient(base: bundle.url)
        for path in ["/api/data/todoitem", "/api/operations"] {
            let onDevice = try await live.client.send(.get, path)
            let inBundle = try await reader.send(.get, path)
            #expect(inBundle.status == 200)
            #expect(inBundle.text == onDevice.text)
        }
        let operations = try await reader.send(.get, "/operations")
        #expect(operations.status == 200 && operations.text.contains("third, queued"))

        let refused = try await reader.send(.post, "/sync", form: ["_csrf": "x"])
        #expect(refused.status == 403)
        #expect(refused.text.contains("this is a read-only support bundle"))
        let refusedAPI = try await reader.send(
            .post, "/api/data/todoitem", json: Data(#"{"text":"new"}"#.utf8), headers: [.accept: "application/json"])
        #expect(refusedAPI.status == 403 && refusedAPI.text.contains("this is a read-only support bundle"))
        #expect(!bundle.sync.start(.sync, session: nil))

        await bundle.stop()
        await live.stop()
        await service.running.stop()
        folder.remove()
    }

    @Test func aFileThatIsNotABundleIsRefusedNamingItAndNothingIsWritten() throws {
        let folder = try TemporaryFolder()
        let scratch = folder.url.appendingPathComponent("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let text = folder.url.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: text)
        #expect(throws: SupportBundleError.notABundle(file: text.path, reason: "it is not a ZIP file")) {
            try SupportBundle.open(text, under: scratch)
        }
        let otherZip = folder.url.appendingPathComponent("other.zip")
        try SupportBundle.archive([("readme.txt", Data("hi".utf8))], store: nil, to: otherZip)
        #expect(throws: SupportBundleError.self) { try SupportBundle.open(otherZip, under: scratch) }
        let error = SupportBundleError.notABundle(file: otherZip.path, reason: "it has no manifest.json")
        #expect(error.description.contains(otherZip.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        folder.remove()
    }

    @Test func aTruncatedOrNewerBundleIsRefusedNamingIt() async throws {
        let folder = try TemporaryFolder()
        let scratch = folder.url.appendingPathComponent("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let context = try SyncContext(path: folder.file("store.sqlite"))
        try await context.table("todoitem").insert(["id": "a", "text": .string(String(repeating: "row ", count: 2000))])
        let whole = folder.url.appendingPathComponent("whole.zip")
        let settings = SupportBundle.Settings(
            remoteURL: nil, pageSize: nil, pushWindow: nil, tableProtocol: nil, syncedTables: ["todoitem"],
            offline: false, applicationKeyWasSet: false, signInTokenWasSet: false)
        try SupportBundle.write(context, settings: settings, secrets: [], madeBy: "test", version: "0", to: whole)
        try await context.close()

        let bytes = try Data(contentsOf: whole)
        let cut = folder.url.appendingPathComponent("cut.zip")
        try bytes.prefix(bytes.count / 2).write(to: cut)
        #expect(throws: SupportBundleError.truncated(file: cut.path)) { try SupportBundle.open(cut, under: scratch) }
        #expect(SupportBundleError.truncated(file: cut.path).description.contains(cut.path))

        let newer = folder.url.appendingPathComponent("newer.zip")
        let manifest = Data(#"{"format": "todosync-support-bundle", "formatVersion": 2}"#.utf8)
        try SupportBundle.archive(
            [("manifest.json", manifest), ("settings.json", Data("{}".utf8))], store: nil, to: newer)
        #expect(throws: SupportBundleError.newerVersion(file: newer.path, version: 2)) {
            try SupportBundle.open(newer, under: scratch)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)

        let opened = try SupportBundle.open(whole, under: scratch)
        #expect(opened.manifest.store.tables.map(\.name) == ["todoitem"])
        #expect(opened.manifest.store.tables.map(\.rows) == [1])
        folder.remove()
    }

    @Test func aBundleThatCannotBeWrittenLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(path: folder.file("store.sqlite"))
        let target = folder.url.appendingPathComponent("missing/support.zip")
        let settings = SupportBundle.Settings(
            remoteURL: nil, pageSize: nil, pushWindow: nil, tableProtocol: nil, syncedTables: [], offline: false,
            applicationKeyWasSet: false, signInTokenWasSet: false)
        #expect(throws: SupportBundleError.self) {
            try SupportBundle.write(context, settings: settings, secrets: [], madeBy: "test", version: "0", to: target)
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))
        try await context.close()
        folder.remove()
    }

    @Test func aSnapshotRemovesKeyTokenAndJWTLookingValuesFromEveryTable() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext(
            path: folder.file("store.sqlite"),
            configuration: SyncConfiguration(applicationKey: Self.key, authToken: Self.token))
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl"
        try await context.table("todoitem").insert(["id": "a", "text": .string("note: \(jwt) and \(Self.key)")])
        let copy = folder.file("copy.sqlite")
        try context.writeRedactedSnapshot(to: copy, removing: [])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        for secret in [Self.key, Self.token, jwt] { #expect(bytes.range(of: Data(secret.utf8)) == nil) }
        let reopened = try SyncContext(path: copy)
        let text = try reopened.table("todoitem").item(id: "a")?["text"]
        #expect(text == .string("note: [redacted] and [redacted]"))
        try await reopened.close()
        try await context.close()
        folder.remove()
    }
}
