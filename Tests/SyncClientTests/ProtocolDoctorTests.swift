import Foundation
import Synchronization
import TableService
import TestSupport
import Testing

@testable import SyncClient

/// `todosync doctor`: all green on todosync serve in both protocols, red with the right reason on a
/// service that misbehaves, and a typed stop when the service cannot answer.
@Suite struct ProtocolDoctorTests {
    /// A v2 page of `ids`, each row with the system columns.
    static func page(_ ids: [String]) -> String {
        "["
            + ids.map { #"{"id":"\#($0)","version":"MQ==","updatedAt":"2026-11-21T23:02:54.020Z","deleted":false}"# }
            .joined(separator: ",") + "]"
    }

    static func verdict(_ report: DoctorReport, _ name: String) -> DoctorVerdict? {
        report.results.first { $0.name == name }?.verdict
    }

    @Test(arguments: [ProtocolChoice.v2, .v3])
    func doctorIsAllGreenOnTodosyncServeAndRemovesItsRows(_ choice: ProtocolChoice) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Pages of two rows: the five probe rows take three pages in both protocols (v3 by nextLink).
        try await withStopping(TestService.sqlite(in: folder) { $0.pageSize = 2 }) { service in
            try await service.rest.seed(3)

            let report = await ProtocolDoctor(.init(url: service.endpoint, protocolChoice: choice)).run()

            #expect(report.isHealthy, "\(report.failures.map { "\($0.name): \($0.verdict.explanation)" })")
            #expect(report.results.count == ProtocolDoctor.checks.count + 1)
            #expect(report.results.allSatisfy { $0.verdict.outcome == .passed })
            #expect(Self.verdict(report, "paging")?.explanation.contains("in 3 page(s)") == true)
            #expect(Self.verdict(report, "live")?.explanation.contains("It offers a change channel") == true)
            let probes = try await service.rest.all().filter { $0["id"]?.stringValue?.hasPrefix("doctor-") == true }
            #expect(!probes.isEmpty)
            #expect(probes.allSatisfy { $0["deleted"]?.boolValue == true }, "every probe row is deleted afterwards")
        }
    }

    @Test func readOnlyDoctorSendsOnlyGets() async throws {
        try await withMisbehavingService(answering: { request in
            if !request.path.hasSuffix("/todoitem") {
                return .json(200, String(Self.page(["a"]).dropFirst().dropLast()))
            }
            return .json(200, request.query["$filter"]?.contains("absent") == true ? "[]" : Self.page(["a"]))
        }) { service in
            let report = await ProtocolDoctor(.init(url: service.url, readOnly: true)).run()

            #expect(report.isHealthy, "\(report.failures.map(\.verdict.explanation))")
            #expect(!service.requests.isEmpty)
            #expect(service.requests.allSatisfy { $0.method == "GET" })
            #expect(Self.verdict(report, "if-match")?.outcome == .skipped)
        }
    }

    @Test func ignoredFilterIsRed() async throws {
        try await withMisbehavingService(answering: { _ in .json(200, Self.page(["someone-else"])) }) { service in
            let report = await ProtocolDoctor(.init(url: service.url, readOnly: true)).run()

            let filter = try #require(Self.verdict(report, "filter"))
            #expect(filter.outcome == .failed)
            #expect(filter.explanation.contains("ignores $filter"))
            #expect(
                report.failures.first { $0.name == "filter" }?.exchanges.first?.target.contains("$filter=id%20eq")
                    == true)
        }
    }

    @Test func repeatingPagesAreRed() async throws {
        try await withMisbehavingService(answering: { _ in .json(200, Self.page(["a", "b"])) }) { service in
            let report = await ProtocolDoctor(.init(url: service.url, readOnly: true)).run()

            let paging = try #require(Self.verdict(report, "paging"))
            #expect(paging.outcome == .failed)
            #expect(paging.explanation.contains("repeats its pages"))
        }
    }

    @Test func answerAboutAnotherItemIsRed() async throws {
        try await withMisbehavingService(answering: { request in
            request.path.hasSuffix("/todoitem")
                ? .json(200, Self.page(["a"])) : .json(200, #"{"id":"b","version":"MQ=="}"#)
        }) { service in
            let report = await ProtocolDoctor(.init(url: service.url, readOnly: true)).run()

            let item = try #require(Self.verdict(report, "item"))
            #expect(item.outcome == .failed)
            #expect(item.explanation.contains("another item, 'b'"))
        }
    }

    @Test func conflictWithoutBodyIsRed() async throws {
        let inserted = Mutex<Set<String>>([])
        try await withMisbehavingService(answering: { request in
            guard request.method == "POST" else {
                return request.method == "GET" ? .json(200, "[]") : .json(200, "{}")
            }
            let id = (try? JSONDecoder().decode([String: String].self, from: request.body))?["id"] ?? ""
            guard inserted.withLock({ $0.insert(id).inserted }) else { return .json(409, "") }
            return .json(201, #"{"id":"\#(id)","version":"MQ==","updatedAt":"2026-11-21T23:02:54.020Z"}"#)
        }) { service in
            let report = await ProtocolDoctor(.init(url: service.url, protocolChoice: .v2)).run()

            let duplicate = try #require(Self.verdict(report, "duplicate-id"))
            #expect(duplicate.outcome == .failed)
            #expect(duplicate.explanation.contains("409 without a body"))
        }
    }

    @Test func unreachableServiceStopsWithATypedMessage() async throws {
        // Nothing listens on port 1, and no test can take it (below 1024, never handed out for
        // port 0): a stopped test service's port could be taken by another test's service meanwhile.
        // Its deadlines on a clock that stands still: only the refusal can end the run, however long a
        // loaded machine takes to see it. The limit only guards against a hang: the whole suite beside
        // two busy loops once starved this run, 10 ms alone, for 51 s.
        let report = try await withTimeLimit(120) {
            await ProtocolDoctor(.init(url: unreachableURL), clock: ManualWallClock()).run()
        }

        guard case .unreachable(let detail)? = report.stop else {
            Issue.record("stopped by \(String(describing: report.stop))")
            return
        }
        #expect(detail.contains("connection refused"))
        #expect(report.stopped?.contains("Check the address") == true)
        #expect(report.failures.count == 1)
        #expect(!report.cancelled)
    }

    @Test func tricklingServiceEndsWithinTheDeadline() async throws {
        try await withMisbehavingService(answering: { _ in .trickle(length: 10_000, interval: 0.05) }) { service in
            let clock = ManualWallClock()
            let report = try await withTimeLimit(120) {
                await clock.passingEveryDeadline {
                    await ProtocolDoctor(.init(url: service.url, idleTimeout: 5, requestTimeout: 0.5), clock: clock)
                        .run()
                }
            }

            #expect(report.stop == .tooSlow(seconds: 0.5))
        }
    }

    @Test func cancelStopsARunWaitingForAnAnswer() async throws {
        try await withMisbehavingService(answering: { _ in .silence }) { service in
            // Deadlines far beyond the test's own limit: on a loaded machine the test may resume long after
            // the request arrived, and only the cancel may end this run.
            let run = Task {
                await ProtocolDoctor(.init(url: service.url, idleTimeout: 600, requestTimeout: 600)).run()
            }
            await service.requestsArrived(1)
            run.cancel()
            let report = try await withTimeLimit(120) { await run.value }

            #expect(report.cancelled && report.stop == .cancelled)
            #expect(report.failures.isEmpty)
        }
    }

    @Test func officialServersEchoedConflictBodyIsGreen() {
        let insert = RecordedExchange(
            id: 0, startedAt: Date(), milliseconds: 0, method: "POST", target: "/tables/todoitem",
            purpose: .doctor(table: "todoitem"), status: 201, bytesSent: 0, bytesReceived: 0, requestHeaders: "",
            responseHeaders: "",
            json: .object(["id": .string("item-1"), "version": .string("MQ==")]))
        var echo = insert
        echo.status = 409
        echo.json = .object(["id": .string("item-1"), "text": .string("duplicate")])
        echo.responseBody = #"{"id":"item-1","text":"duplicate"}"#

        let verdict = DoctorCheck.duplicate.judge(.v2, [insert, echo])

        #expect(verdict.outcome == .passed)
        #expect(verdict.explanation.contains("echoed"))
    }
}

extension ProtocolDoctorTests {
    @Test func doctorIsAllGreenOnTheOfficialServersBehaviour() async throws {
        let official = OfficialServerEmulation()
        try await withMisbehavingService(answering: { official.answer($0) }) { service in
            let report = await ProtocolDoctor(.init(url: service.url)).run()

            #expect(report.dialect == .v2)
            #expect(report.isHealthy, "\(report.failures.map { "\($0.name): \($0.verdict.explanation)" })")
            #expect(Self.verdict(report, "duplicate-id")?.explanation.contains("echoed") == true)
            #expect(Self.verdict(report, "paging")?.explanation.contains("shared one millisecond") == true)
        }
    }

    @Test func cleanUpGivesUpAtTheFirstDeleteThatFailsAndNamesTheRowsLeft() async throws {
        // Every request but the first read and the inserts gets no answer: the first one of the
        // checks (a read), then the first delete of the clean-up.
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        try await withMisbehavingService(answering: { request in
            switch request.method {
            case "GET" where request.query["$top"] == "1": return .json(200, "[]")
            case "POST": return .json(201, String(decoding: request.body, as: UTF8.self))
            default:
                arrived.yield()
                return .silence
            }
        }) { service in
            let clock = ManualWallClock()
            // Each request that gets no answer waits for its deadline, which passes once it arrived
            // (each arrival, a request sent again included, moves the clock past it). Both tasks are
            // children of the time limit's, so that a run that never ends fails the test, not hangs it.
            let report = try await withTimeLimit(180) {
                await withTaskGroup(of: DoctorReport?.self) { group in
                    group.addTask {
                        await ProtocolDoctor(.init(url: service.url, idleTimeout: 10, requestTimeout: 2), clock: clock)
                            .run()
                    }
                    group.addTask {
                        for await _ in arrivals { clock.advance(by: 2) }
                        return nil
                    }
                    defer { group.cancelAll() }
                    while let next = await group.next() {
                        if let report = next { return report }
                    }
                    preconditionFailure("the doctor's task always gives a report")
                }
            }

            #expect(report.stop == .tooSlow(seconds: 2))
            let posted = service.requests.filter { $0.method == "POST" }.compactMap {
                (try? JSONDecoder().decode([String: String].self, from: $0.body))?["id"]
            }
            #expect(!posted.isEmpty)
            #expect(Set(posted).isSubset(of: report.leftBehind))
            #expect(report.leftBehind.allSatisfy { $0.hasPrefix("doctor-") })
            #expect(service.requests.filter { $0.method == "DELETE" }.count == 1)
            #expect(report.summary.contains("could not be deleted"))
        }
    }

    @Test func theApplicationKeyIsSentButNeverShown() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let key = "doctor-key-7f3a"
        try await withStopping(TestService.sqlite(in: folder) { $0.applicationKey = key }) { service in
            let refused = await ProtocolDoctor(.init(url: service.endpoint, readOnly: true)).run()
            let report = await ProtocolDoctor(.init(url: service.endpoint, applicationKey: key)).run()

            let protocolCheck = try #require(Self.verdict(refused, "protocol"))
            #expect(protocolCheck.outcome == .failed && protocolCheck.explanation.contains("HTTP 401"))
            #expect(report.isHealthy, "\(report.failures.map(\.verdict.explanation))")
            let shown = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
            #expect(!shown.contains(key))
            #expect(shown.contains("X-ZUMO-APPLICATION: [redacted]"))
        }
    }
}

/// A service that needs a signed-in user is probed with the token, sent in the header each protocol's
/// clients use (or the one `--auth-style` names), and never shown.
@Suite struct ProtocolDoctorSignInTests {
    static let signIn = SignIn(secret: "a-doctor-secret-of-32-characters!", required: true)

    @Test(arguments: [
        (ProtocolChoice.v2, AuthStyle?.none, "X-ZUMO-AUTH: [redacted]"), (.v3, nil, "Authorization: Bearer [redacted]"),
        (.v2, .bearer, "Authorization: Bearer [redacted]"), (.v3, .zumo, "X-ZUMO-AUTH: [redacted]"),
    ])
    func aServiceNeedingSignInIsProbedWithTheToken(
        _ choice: ProtocolChoice, _ style: AuthStyle?, _ shown: String
    ) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await withStopping(TestService.sqlite(in: folder) { $0.signIn = Self.signIn }) { service in
            let token = try await TokenIssuer.token(for: "doctor", signIn: Self.signIn)

            let refused = await ProtocolDoctor(.init(url: service.endpoint, readOnly: true, protocolChoice: choice))
                .run()
            var options = ProtocolDoctor.Options(url: service.endpoint, protocolChoice: choice)
            options.authToken = token
            options.authStyle = style
            let report = await ProtocolDoctor(options).run()

            #expect(!refused.isHealthy)
            #expect(report.isHealthy, "\(report.failures.map { "\($0.name): \($0.verdict.explanation)" })")
            #expect(!String(decoding: try JSONEncoder().encode(report), as: UTF8.self).contains(token))
            let sent = report.results.flatMap(\.exchanges).filter { $0.method == "POST" }
                .flatMap { $0.requestHeaders.split(separator: "\n").map(String.init) }
            #expect(sent.contains(shown), "\(sent)")
        }
    }
}
