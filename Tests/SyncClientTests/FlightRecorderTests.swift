import Foundation
import GRDB
import HTTPTypes
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

/// The flight recorder keeps every exchange with the service — what it served, its status, sizes,
/// time and bodies — in the store, bounded, without a secret.
@Suite(.timeLimit(.minutes(10)))
struct FlightRecorderTests {
    let folder: TemporaryFolder
    let service: TestService

    static let applicationKey = "app-key-7f3a9c51"
    /// Looks like a JSON Web Token, as sign-in tokens do.
    static let authToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLWFsaWNl"

    init() async throws {
        folder = try TemporaryFolder()
        // The service needs neither; the client sends both on every request.
        service = try await TestService.forSync(in: folder)
    }

    func context(retention: Int? = nil) async throws -> SyncContext {
        let context = try SyncContext(
            path: folder.file("store.sqlite"),
            configuration: SyncConfiguration(
                remoteURL: service.endpoint, applicationKey: Self.applicationKey, authToken: Self.authToken))
        if let retention { try await context.setRetention(of: .exchanges, to: retention) }
        return context
    }

    @Test func everyPushAndPullExchangeIsRecordedWithWhatItServed() async throws {
        let context = try await context()
        try await service.rest.insert(["id": "theirs", "text": "from another device"])
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        try await context.table("todoitem").insert(["id": "b", "text": "two"])
        _ = try await context.push()
        _ = try await context.table("todoitem").pull(queryId: "all")

        let exchanges = try context.exchanges().exchanges
        #expect(exchanges.map(\.method) == ["GET", "GET", "POST", "POST"], "newest first")
        #expect(exchanges[0].purpose == .pull(table: "todoitem", queryId: "all", page: 2), "the empty last page")
        let pull = exchanges[1]
        #expect(pull.purpose == .pull(table: "todoitem", queryId: "all", page: 1))
        #expect(pull.status == 200 && pull.target.hasPrefix("/tables/todoitem?"))
        #expect(pull.responseBody?.contains("from another device") == true)
        #expect(pull.bytesReceived == pull.responseBody?.utf8.count)
        // Recorded as they end: the window sends both at once.
        let pushes = exchanges[2...].sorted { $0.purpose.description < $1.purpose.description }
        #expect(
            pushes.map(\.purpose) == [
                .push(operationId: 1, table: "todoitem", itemId: "a"),
                .push(operationId: 2, table: "todoitem", itemId: "b"),
            ])
        #expect(pushes.allSatisfy { $0.status == 201 && $0.target == "/tables/todoitem" })
        #expect(pushes[0].requestBody?.contains("\"one\"") == true)
        #expect(pushes[0].bytesSent > 0 && pushes[0].milliseconds > 0)
        #expect(pushes[0].requestHeaders.contains("ZUMO-API-VERSION: 2.0.0"))
    }

    @Test func secretsNeverReachTheStoreFile() async throws {
        let context = try await context()
        // An answer that carries a token of its own (another user's, say) in a value.
        let other = "eyJ0eXAiOiJKV1QifQ.eyJ1c2VyIjoiYm9iIn0.b3RoZXItc2lnbmF0dXJl"
        try await context.table("todoitem").insert(["id": "a", "text": .string("token " + other)])
        _ = try await context.push()
        let recorded = try #require(try context.exchanges().exchanges.first)
        #expect(recorded.requestHeaders.contains("X-ZUMO-APPLICATION: [redacted]"))
        #expect(recorded.requestHeaders.contains("X-ZUMO-AUTH: [redacted]"))
        #expect(recorded.requestBody?.contains("token [redacted]") == true)
        #expect(recorded.responseBody?.contains("token [redacted]") == true)

        // Without the saved key, token and the row that holds the other token, the file (rewritten
        // whole by VACUUM) holds no secret anywhere: not in the recorder either.
        _ = try await context.setRemote(url: service.endpoint, applicationKey: nil)
        try await context.setAuthToken(nil)
        try await context.write { db in try db.execute(sql: "DELETE FROM todoitem") }
        try await context.close()
        let database = try DatabaseQueue(path: folder.file("store.sqlite"))
        try await database.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        try database.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.file("store.sqlite")))
        for secret in [Self.applicationKey, Self.authToken, other] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret.prefix(12))… is in the store file")
        }
        #expect(bytes.range(of: Data("[redacted]".utf8)) != nil, "the recorder kept the exchanges")
    }

    @Test func theRecorderKeepsTheNewestExchangesAcrossARestart() async throws {
        let context = try await context(retention: 3)
        for index in 0..<5 { try await context.table("todoitem").insert(["id": .string("i\(index)"), "text": "x"]) }
        _ = try await context.push()
        #expect(try context.exchanges().exchanges.map(\.purpose.description).count == 3)
        try await context.close()

        let reopened = try await self.context()
        let kept = try reopened.exchanges().exchanges
        #expect(kept.count == 3)
        #expect(try reopened.retention(of: .exchanges) == 3)
        #expect(
            Set(kept.map(\.purpose)).isSubset(
                of: (1...5).map {
                    ExchangePurpose.push(operationId: Int64($0), table: "todoitem", itemId: "i\($0 - 1)")
                }))
        #expect(kept.map(\.id) == kept.map(\.id).sorted(by: >))
    }

    @Test func aLongBodyIsKeptUpToItsLimitAndSaysHowLongItWas() async throws {
        let context = try await context()
        let long = String(repeating: "é", count: 10_000)  // 20,000 bytes
        try await context.table("todoitem").insert(["id": "a", "text": .string(long)])
        _ = try await context.push()
        let body = try #require(try context.exchanges().exchanges.first?.requestBody)
        let (kept, note) = (body.split(separator: "\n").first ?? "", body.split(separator: "\n").last ?? "")
        #expect(kept.utf8.count <= RecordedExchange.maximumBody && kept.utf8.count > RecordedExchange.maximumBody - 2)
        #expect(note.hasPrefix("[cut: ") && note.contains("bytes in all]"))
    }

    @Test func anExchangeWithoutAnAnswerIsRecordedWithWhy() async throws {
        // A proxy that closes every connection without an answer, and keeps its port (a stopped
        // service's port may be taken by another test's service meanwhile).
        let proxy = try await service.proxy(plan: .always(.refuse))
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: SyncConfiguration(remoteURL: proxy.endpoint))
        try await context.table("todoitem").insert(["id": "a", "text": "one"])
        await #expect(throws: SyncError.self) { try await context.push() }
        let failed = try #require(try context.exchanges(ExchangeQuery(status: "failed")).exchanges.first)
        #expect(failed.status == nil && failed.outcome == "no answer")
        // A reset connection: sent again within the push, then recorded as dropping.
        #expect(["unreachable", "closed", "dropping"].contains { failed.failure?.contains($0) == true })
        #expect(failed.purpose == .push(operationId: 1, table: "todoitem", itemId: "a"))
    }

    @Test func exchangesFilterByStatusTableAndItem() async throws {
        let context = try await context()
        try await service.rest.insert(["id": "taken", "text": "theirs"])
        try await context.table("todoitem").insert(["id": "taken", "text": "mine"])
        try await context.table("todoitem").insert(["id": "free", "text": "mine"])
        _ = try await context.push()
        _ = try await context.table("todoitem").pull()
        #expect(try context.exchanges(ExchangeQuery(status: "4xx")).exchanges.map(\.status) == [409])
        #expect(try context.exchanges(ExchangeQuery(status: "201")).exchanges.map(\.status) == [201])
        #expect(try context.exchanges(ExchangeQuery(table: "tag")).exchanges.isEmpty)
        let aboutFree = try context.exchanges(ExchangeQuery(itemId: "free")).exchanges
        #expect(aboutFree.map(\.method) == ["GET", "POST"], "its push, and the pull page that brought it back")
        let all = try context.exchanges().exchanges
        let page = try context.exchanges(ExchangeQuery(limit: 1))
        #expect(page.exchanges.map(\.id) == [all[0].id] && page.next == all[0].id)
        #expect(try context.exchanges(ExchangeQuery(before: page.next, limit: 500)).exchanges == Array(all.dropFirst()))
    }
}

@Suite struct RedactionTests {
    let redaction = Redaction(secrets: ["app-key-1234", nil])

    @Test func knownSecretsAndWebTokensAreReplacedWherever() {
        #expect(redaction.text("key=app-key-1234&x=1") == "key=[redacted]&x=1")
        #expect(redaction.text(#"{"t":"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."}"#) == #"{"t":"[redacted]"}"#)
        #expect(redaction.text("eyJust a word") == "eyJust a word")
    }

    @Test func credentialHeadersLoseTheirValues() {
        let fields: HTTPFields = [
            .init("X-ZUMO-AUTH")!: "anything", .init("Cookie")!: "session=1", .authorization: "Bearer x",
            .accept: "application/json",
        ]
        #expect(
            redaction.headers(fields)
                == "X-ZUMO-AUTH: [redacted]\nCookie: [redacted]\nAuthorization: [redacted]\nAccept: application/json")
    }

    @Test func aTokenAcrossTheCutIsStillRedacted() throws {
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"
        let body = Data((String(repeating: "x", count: 95) + token + String(repeating: "y", count: 50)).utf8)
        let kept = try #require(redaction.body(body, limit: 100))
        #expect(kept.hasPrefix(String(repeating: "x", count: 95) + "[reda\n") && !kept.contains("eyJ"))
        #expect(kept.hasSuffix("[cut: \(body.count) bytes in all]"))
    }
}
