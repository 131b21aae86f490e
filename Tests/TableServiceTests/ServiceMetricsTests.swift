import Foundation
import HTTPServer
import HTTPTypes
import TestSupport
import Testing

@testable import TableService

/// `todosync serve`'s `GET /metrics`: each `/tables` request by table, method and status, their
/// durations, and each table's rows.
@Suite(.timeLimit(.minutes(10))) struct ServiceMetricsTests {
    @Test func metricsCountRequestsByTableMethodAndStatusAndShowRows() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.sqlite(in: folder)
        let client = TestHTTPClient()
        let base = service.running.url
        let headers: HTTPFields = [.contentType: "application/json", ProtocolHeaderName.version: "2.0.0"]
        let inserted = try await client.send(
            .post, base + "/tables/todoitem", headers: headers, body: Data(#"{"id":"secret-id","text":"secret"}"#.utf8))
        #expect(inserted.status == 201)
        _ = try await client.send(.get, base + "/tables/todoitem/secret-id", headers: headers)
        _ = try await client.send(.get, base + "/tables/todoitem/secret-id", headers: headers)
        let unknown = try await client.send(.get, base + "/tables/madeUpName1/x", headers: headers)
        #expect(unknown.status == 404)

        let answer = try await client.send(.get, base + "/metrics")
        #expect(answer.status == 200)
        let samples = PrometheusSample.parse(answer.text)
        #expect(
            samples.value("todosync_http_requests_total", ["table": "todoitem", "method": "POST", "status": "201"]) == 1
        )
        #expect(
            samples.value("todosync_http_requests_total", ["table": "todoitem", "method": "GET", "status": "200"]) == 2)
        #expect(
            samples.value("todosync_http_requests_total", ["table": "other", "method": "GET", "status": "404"]) == 1)
        #expect(samples.value("todosync_http_request_duration_seconds_count") == 4)
        #expect(samples.value("todosync_rows", ["table": "todoitem"]) == 1)
        #expect(!answer.text.contains("secret") && !answer.text.contains("madeUpName1"))
        await service.running.stop()
        folder.remove()
    }

    @Test func recordingCanBeTurnedOff() {
        let metrics = ServiceMetrics(isRecording: false)
        metrics.record(Request(method: .get, path: "/tables/todoitem"), status: .ok) { _ in true }
        #expect(!String(decoding: metrics.exposition(), as: UTF8.self).contains("todosync_http_requests_total"))
    }
}

private enum ProtocolHeaderName {
    static let version = HTTPField.Name("ZUMO-API-VERSION")!
}
