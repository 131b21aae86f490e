import Foundation
import HTTPTypes
import SyncProtocol
import Synchronization

/// The requests of one doctor run, over the sync client's transport (its deadlines, its pool, no
/// flight recorder): each request comes back as a ``RecordedExchange``, and every row it creates is
/// remembered for the clean-up.
final class DoctorSession: Sendable {
    let transport: HTTPTransport
    let table: String
    /// The protocol spoken (the protocol check itself names its version per request).
    let dialect: TableProtocol
    /// Every probe row's id starts with it: `doctor-<8 hex>-`.
    let prefix: String
    /// A row of the table as the first page showed it, for the read-only checks.
    let sample: Item?
    /// Whether only GETs are sent.
    let isReadOnly: Bool
    private let created = Mutex<[String]>([])

    init(transport: HTTPTransport, table: String, dialect: TableProtocol, prefix: String, sample: Item?, readOnly: Bool)
    {
        isReadOnly = readOnly
        self.transport = transport
        self.table = table
        self.dialect = dialect
        self.prefix = prefix
        self.sample = sample
    }

    /// The probe rows created so far.
    var createdIds: [String] { created.withLock { $0 } }

    /// One request; HTTP error statuses are answers.
    func send(
        _ method: HTTPRequest.Method, id: String? = nil, query: [(String, String)] = [], body: Item? = nil,
        ifMatch: String? = nil, apiVersion: String? = nil
    ) async throws(SyncError) -> RecordedExchange {
        let data = body.flatMap { try? JSONEncoder.todosync().encode($0) }
        let version = apiVersion ?? dialect.apiVersion
        // The protocol check asks in both versions: the token goes as each version's clients send it.
        let transport = transport.speaking(TableProtocol.allCases.first { $0.apiVersion == version } ?? dialect)
        let path = transport.path(table: table, id: id)
        let target =
            path
            + (query.isEmpty
                ? ""
                : "?"
                    + query.map { HTTPTransport.encode($0.0) + "=" + HTTPTransport.encode($0.1) }.joined(separator: "&"))
        var requestHeaders = ["ZUMO-API-VERSION: " + version]
        if let ifMatch { requestHeaders.append("If-Match: " + EntityTag.header(for: ifMatch)) }
        if transport.applicationKey.map({ !$0.isEmpty }) == true {
            requestHeaders.append("X-ZUMO-APPLICATION: [redacted]")
        }
        if transport.signsIn, let field = transport.authField("[redacted]") {
            requestHeaders.append("\(field.name.rawName): \(field.value)")
        }
        if data != nil { requestHeaders.append("Content-Type: application/json") }
        let started = (date: Date(), instant: ContinuousClock.now)
        let reply = try await transport.send(
            method, path, query: query, body: data, ifMatch: ifMatch, apiVersion: version, for: .doctor(table: table))
        return RecordedExchange(
            id: 0, startedAt: started.date, milliseconds: RecordedExchange.milliseconds(since: started.instant),
            method: method.rawValue, target: target, purpose: .doctor(table: table), status: reply.status.code,
            bytesSent: data?.count ?? 0, bytesReceived: reply.body.count,
            requestHeaders: requestHeaders.joined(separator: "\n"),
            responseHeaders: reply.headers.map { "\($0.name.rawName): \($0.value)" }.joined(separator: "\n"),
            requestBody: data.map { String(decoding: $0, as: UTF8.self) },
            responseBody: reply.body.isEmpty
                ? nil : String(decoding: reply.body.prefix(RecordedExchange.maximumBody), as: UTF8.self),
            json: try? JSONDecoder().decode(JSONValue.self, from: reply.body))
    }

    /// Inserts a probe row `<prefix><suffix>` and remembers it for the clean-up.
    func insert(_ suffix: String) async throws(SyncError) -> RecordedExchange {
        let id = prefix + suffix
        created.withLock { $0.append(id) }
        return try await send(.post, body: ["id": .string(id), "text": .string("todosync doctor probe")])
    }

    /// The rows whose id starts with the prefix, of one page.
    func probeRowsFilter() -> String { "startswith(id,'\(prefix)')" }

    /// Deletes every probe row (a soft-deleting service keeps them as deleted rows) and returns the
    /// ids it could not delete. Answers are not judged; the first exchange that fails (the service
    /// gone or stalled) ends the clean-up, so that it never waits a deadline per row.
    func cleanUp() async -> [String] {
        let ids = createdIds
        for (index, id) in ids.enumerated() {
            do {
                _ = try await send(.delete, id: id)
            } catch {
                return Array(ids[index...])
            }
        }
        return []
    }
}
