import Foundation
import SyncProtocol
import Testing

@testable import SyncClient

/// The doctor's verdicts as pure functions of the answers: one test per way a service can be wrong.
@Suite struct DoctorVerdictTests {
    static func exchange(
        _ method: String, _ target: String = "/tables/todoitem", status: Int, _ json: JSONValue?
    ) -> RecordedExchange {
        let body = json.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return RecordedExchange(
            id: 0, startedAt: Date(), milliseconds: 0, method: method, target: target,
            purpose: .doctor(table: "todoitem"), status: status, bytesSent: 0, bytesReceived: body.utf8.count,
            requestHeaders: "", responseHeaders: "", responseBody: body.isEmpty ? nil : body, json: json)
    }

    static func row(_ id: String, version: String = "MQ==", deleted: Bool = false) -> JSONValue {
        .object([
            "id": .string(id), "version": .string(version), "deleted": .bool(deleted),
            "updatedAt": .string("2026-11-21T23:02:54.020Z"),
        ])
    }

    static let inserted = exchange("POST", status: 201, row("p-1"))

    @Test func aStaleIfMatchThatSucceedsIsALostUpdate() {
        let verdict = DoctorCheck.ifMatch.judge(
            .v2, [Self.inserted, Self.exchange("PATCH", status: 200, Self.row("p-1"))])
        #expect(verdict.outcome == .failed)
        #expect(verdict.explanation.contains("lost update"))
    }

    @Test func a412WithoutTheCurrentItemIsRed() {
        let verdict = DoctorCheck.ifMatch.judge(.v3, [Self.inserted, Self.exchange("PUT", status: 412, nil)])
        #expect(verdict.outcome == .failed)
        #expect(verdict.explanation.contains("without the current item"))
    }

    @Test func aServiceThatDeletesForGoodFailsSoftDelete() {
        let empty = Self.exchange("GET", status: 200, .array([]))
        let verdict = DoctorCheck.softDelete.judge(
            .v2, [Self.inserted, Self.exchange("DELETE", status: 200, Self.row("p-1", deleted: true)), empty, empty])
        #expect(verdict.outcome == .failed)
        #expect(verdict.explanation.contains("deletes rows for good"))
    }

    @Test func aV3PageWhoseNextLinkNeverEndsIsRed() {
        let page = Self.exchange(
            "GET", status: 200,
            .object(["items": .array([Self.row("p-1")]), "nextLink": .string("$skip=1")]))
        var second = page
        second.json = .object(["items": .array([]), "nextLink": .string("$skip=1")])
        let verdict = DoctorCheck.paging.judge(.v3, [Self.inserted, page] + Array(repeating: second, count: 7))
        #expect(verdict.outcome == .failed)
        #expect(verdict.explanation.contains("does not end"))
    }

    @Test func aV2ArrayIsNotAV3Page() {
        let verdict = DoctorCheck.paging.judge(.v3, [Self.exchange("GET", status: 200, .array([Self.row("a")]))])
        #expect(verdict.outcome == .failed)
        #expect(verdict.explanation.contains("{items, count, nextLink}"))
    }

    @Test func secondsOnlyTimestampsAreRed() {
        let filter = "/tables/todoitem?$filter=(id eq 'a') and (updatedAt eq datetimeoffset'2026-11-21T23:02:54Z')"
        let verdict = DoctorCheck.timestamps.judge(.v2, [Self.exchange("GET", filter, status: 200, .array([]))])
        #expect(verdict.outcome == .failed)
        #expect(verdict.explanation.contains("0 fractional digits"))
    }

    @Test func theProtocolCheckNamesWhatTheEndpointSpeaks() {
        let v2 = Self.exchange("GET", "/tables/todoitem?$top=1", status: 200, .array([]))
        let v3 = Self.exchange("GET", "/tables/todoitem?$top=1", status: 400, .object(["error": .string("version")]))
        #expect(DoctorCheck.speaks.judge(.v2, [v2, v3]).outcome == .passed)
        let refused = DoctorCheck.speaks.judge(.v3, [v2, v3])
        #expect(refused.outcome == .failed)
        #expect(refused.explanation.contains("It speaks Mobile Apps v2 (2.0.0)"))
        #expect(ProtocolDoctor.dialect(for: .auto, opening: [v2, v3]) == .v2)
    }
}
