import FaultProxy
import Foundation
import SyncClient
import SyncProtocol
import Testing

/// A link that drops connections: a push or a pull sends a request again within the same sync
/// (``ConnectionRetry``) instead of cancelling the requests beside it and stopping, so that it
/// makes progress where every sync used to meet a drop and start over.
@Suite struct LossyLinkTests {
    @Test func aPushThroughAFifthOfDroppedConnectionsDeliversEveryChangeOnceInAtMostThreePushes() async throws {
        // The service applies each dropped POST; its answer never comes (`drop`).
        try await withReliabilityHarness(
            plan: FaultPlan([FaultRule(.dropResponse, method: "POST", probability: 0.2)], seed: 34)
        ) { harness in
            let context = try harness.client()
            let items: [Item] = (0..<120).map { ["id": .string("n\($0)"), "text": .string("change \($0)")] }
            try await context.table("todoitem").insert(items)
            var pushes = 0
            while try !context.operations.all().isEmpty, pushes < 3 {
                pushes += 1
                _ = try? await context.push()
            }
            #expect(try context.operations.all().isEmpty, "still queued after \(pushes) pushes")
            let rows = try await harness.serviceRows()
            #expect(rows.count == 120)
            for item in items { #expect(rows[item["id"]!.stringValue!]?["text"] == item["text"]) }
            harness.proxy.setPlan(.passThrough)
            try await context.table("todoitem").pull(queryId: "all")
            try await expectConverged(context, harness)
        }
    }

    @Test func aFailedRequestLetsTheOthersInTheWindowAnswerAndKeepsTheirAnswers() async throws {
        // The third POST is answered 503: the push stops, but the answers on the wire are kept.
        try await withReliabilityHarness(
            plan: FaultPlan([FaultRule(.status(503), method: "POST", nth: 3)])
        ) { harness in
            let context = try harness.client()
            try await context.table("todoitem").insert((0..<16).map { ["id": .string("w\($0)"), "text": "t"] })
            await #expect(throws: SyncError.self) { _ = try await context.push() }
            // All sixteen went out at once; the fifteen the service applied left the queue (none was
            // cancelled on the wire), and the refused one waits, attempted.
            #expect(try await harness.serviceRows().count == 15)
            #expect(try context.operations.all().map(\.state) == [.attempted])
            harness.proxy.setPlan(.passThrough)
            _ = try await context.push()
            try await expectConverged(context, harness)
        }
    }

    @Test func aPullThroughDroppedConnectionsAsksForThePageAgainAndBringsEveryRow() async throws {
        try await withReliabilityHarness { harness in
            let writer = try harness.client("writer", direct: true)
            try await writer.table("todoitem").insert((0..<300).map { ["id": .string("p\($0)"), "text": "pulled"] })
            _ = try await writer.push()
            harness.proxy.setPlan(FaultPlan([FaultRule(.dropResponse, method: "GET", probability: 0.3)], seed: 7))
            let reader = try harness.client("reader")
            let pulled = try await reader.table("todoitem").pull(queryId: "all", settings: PullSettings(pageSize: 25))
            #expect(pulled.received == 300)
            #expect(try reader.table("todoitem").query().count == 300)
        }
    }

    @Test func aLinkThatKeepsDroppingStopsThePushWithATypedErrorAndLosesNothing() async throws {
        try await withReliabilityHarness(plan: .always(.dropResponse)) { harness in
            let context = try harness.client()
            try await context.table("todoitem").insert(["id": "d0", "text": "kept"])
            await #expect {
                _ = try await context.push()
            } throws: { error in
                guard case .stopped(.connectionLost) = error as? SyncError else { return false }
                return true
            }
            #expect(try context.operations.all().map(\.state) == [.attempted])
            harness.proxy.setPlan(.passThrough)
            _ = try await context.push()
            try await expectConverged(context, harness)
        }
    }
}
