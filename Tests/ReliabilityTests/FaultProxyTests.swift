import FaultProxy
import Foundation
import SyncProtocol
import TestSupport
import Testing

/// The proxy itself: each fault does what it says, rules pick requests, seeds replay.
@Suite struct FaultProxyTests {
    @Test func passThroughForwardsRequestsAndBodies() async throws {
        try await withReliabilityHarness { harness in
            let created = try await harness.send(
                .post, "/tables/todoitem", body: Data(#"{"id":"a","text":"hello"}"#.utf8), base: harness.proxy.url)
            #expect(created.status == 201)
            let read = try await harness.get("/tables/todoitem/a", base: harness.proxy.url)
            #expect(read.status == 200)
            #expect(String(decoding: read.body, as: UTF8.self).contains("hello"))
            #expect(harness.proxy.events.map(\.upstreamStatus) == [201, 200])
        }
    }

    @Test func statusFaultAnswersWithoutReachingTheService() async throws {
        try await withReliabilityHarness(plan: .always(.status(503))) { harness in
            let reply = try await harness.send(
                .post, "/tables/todoitem", body: Data(#"{"id":"a"}"#.utf8), base: harness.proxy.url)
            #expect(reply.status == 503)
            #expect(try await harness.get("/tables/todoitem/a").status == 404)
        }
    }

    @Test func dropResponseAppliesTheRequestButTheClientSeesNoAnswer() async throws {
        try await withReliabilityHarness(
            plan: FaultPlan([FaultRule(.dropResponse, method: "POST", nth: 1)])
        ) { harness throws in
            await #expect(throws: (any Error).self) {
                _ = try await harness.send(
                    .post, "/tables/todoitem", body: Data(#"{"id":"a"}"#.utf8), base: harness.proxy.url)
            }
            #expect(try await harness.get("/tables/todoitem/a").status == 200)
        }
    }

    @Test func resetAndRefuseAreNetworkErrors() async throws {
        for fault in [Fault.resetMidResponse, .refuse] {
            try await withReliabilityHarness(plan: .always(fault)) { harness in
                await #expect(throws: (any Error).self, "\(fault)") {
                    _ = try await harness.get("/tables/todoitem", base: harness.proxy.url)
                }
            }
        }
    }

    @Test func truncateAndCorruptDeliverBodiesThatAreNotJSON() async throws {
        for fault in [Fault.truncateBody, .corruptBody] {
            try await withReliabilityHarness { harness in
                _ = try await harness.send(
                    .post, "/tables/todoitem", body: Data(#"{"id":"a","text":"some text"}"#.utf8))
                harness.proxy.setPlan(.always(fault))
                let reply = try await harness.get("/tables/todoitem/a", base: harness.proxy.url)
                #expect(reply.status == 200)
                #expect((try? JSONSerialization.jsonObject(with: reply.body)) == nil, "\(fault)")
            }
        }
    }

    @Test func duplicateSendsTheRequestTwiceAndAnswersWithTheSecond() async throws {
        try await withReliabilityHarness(plan: .always(.duplicate)) { harness in
            let reply = try await harness.send(
                .post, "/tables/todoitem", body: Data(#"{"id":"a"}"#.utf8), base: harness.proxy.url)
            #expect(reply.status == 409)
            #expect(harness.proxy.events.first?.upstreamStatus == 201)
        }
    }

    @Test func rulesMatchMethodPathAndNthRequest() throws {
        let rule = try FaultRule(parsing: "reset,method=patch,path=/tables/*,nth=2")
        #expect(rule == FaultRule(.resetMidResponse, method: "PATCH", path: "/tables/*", nth: 2))
        #expect(try FaultRule(parsing: rule.description) == rule)
        #expect(throws: FaultProxyError.self) { try FaultRule(parsing: "explode") }
        #expect(throws: FaultProxyError.self) { try FaultRule(parsing: "status=404") }
    }

    @Test func theSameSeedReplaysTheSameFaults() async throws {
        func run(seed: UInt64) async throws -> [Fault] {
            var faults: [Fault] = []
            try await withReliabilityHarness(plan: .always(.status(500), probability: 0.5, seed: seed)) { harness in
                for _ in 0..<16 { _ = try await harness.get("/tables/todoitem", base: harness.proxy.url) }
                faults = harness.proxy.events.map(\.fault)
            }
            return faults
        }
        let first = try await run(seed: 42)
        #expect(try await run(seed: 42) == first)
        #expect(Set(first).count == 2)
    }

    @Test func refusingConnectionsClosesThePortUntilTurnedOff() async throws {
        try await withReliabilityHarness { harness in
            #expect(try await harness.get("/tables/todoitem", base: harness.proxy.url).status == 200)
            try await harness.proxy.refuseConnections(true)
            await #expect(throws: (any Error).self) {
                _ = try await harness.get("/tables/todoitem", base: harness.proxy.url)
            }
            try await harness.proxy.refuseConnections(false)
            #expect(try await harness.get("/tables/todoitem", base: harness.proxy.url).status == 200)
        }
    }

    @Test func refusesAnUpstreamOffLoopback() async {
        await #expect(throws: FaultProxyError.upstreamNotLoopback("http://example.org:80")) {
            _ = try await FaultProxy(upstream: "http://example.org:80")
        }
    }

    @Test func aDelayHoldsUpNoOtherConnection() async throws {
        try await withReliabilityHarness(
            plan: FaultPlan([FaultRule(.delay(milliseconds: 60_000), path: "/slow")])
        ) { harness throws in
            let slow = Task { try? await harness.get("/slow", base: harness.proxy.url) }
            // Each of these is answered while the slow one still waits for its minute.
            for _ in 0..<8 {
                #expect(try await harness.get("/tables/todoitem", base: harness.proxy.url).status == 200)
            }
            #expect(harness.proxy.events.first { $0.path == "/slow" }?.upstreamStatus == nil)
            slow.cancel()
        }
    }

    @Test func anInterceptorCanRewriteForwardAndWithholdAnswers() async throws {
        try await withReliabilityHarness { harness in
            let deleted = TestEvent()
            harness.proxy.intercept { request, upstream in
                switch request.method {
                case "POST":
                    var renamed = request
                    renamed.body = Array(#"{"id":"renamed"}"#.utf8)
                    return .answer(try await upstream.forward(renamed))
                case "DELETE":
                    _ = try await upstream.forward(request)
                    deleted.signal()
                    return .withhold
                default:
                    return nil
                }
            }
            let created = try await harness.send(
                .post, "/tables/todoitem", body: Data(#"{"id":"a"}"#.utf8), base: harness.proxy.url)
            #expect(created.status == 201)
            #expect(try await harness.get("/tables/todoitem/renamed").status == 200)
            let deletion = Task {
                try await harness.http.send(
                    .delete, harness.proxy.url + "/tables/todoitem/renamed",
                    headers: [ProtocolHeader.apiVersion: "2.0.0"])
            }
            // The service applied the delete; the client waits for an answer until it gives up.
            await deleted.wait()
            deletion.cancel()
            await #expect(throws: (any Error).self) { try await deletion.value }
            #expect(try await harness.get("/tables/todoitem/renamed").status == 404)
        }
    }
}
