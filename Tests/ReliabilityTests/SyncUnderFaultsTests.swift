import FaultProxy
import Foundation
import SyncClient
import SyncProtocol
import TestSupport
import Testing

/// Push and pull through the fault proxy: every fault ends in success or a typed error, the queue
/// never loses or duplicates a change, and one clean sync afterwards converges.
@Suite struct SyncUnderFaultsTests {
    /// The faults, each on about half the requests (seeded: the seed is printed on failure).
    static let faults: [Fault] = Fault.allKinds.filter { $0 != .passThrough }

    @Test(arguments: faults)
    func pushAndPullUnderFaultLoseNothingAndConvergeAfterwards(_ fault: Fault) async throws {
        // FAULT_SEED=n shifts every seed, to explore other sequences locally.
        let shift = UInt64(ProcessInfo.processInfo.environment["FAULT_SEED"] ?? "") ?? 0
        let seed = UInt64(Self.faults.firstIndex(of: fault) ?? 0) + 11 + shift
        try await withTimeLimit(300) {
            try await Self.exercise(FaultPlan([FaultRule(fault, probability: 0.5)], seed: seed))
        }
    }

    @Test func faultsOnTheNthRequestOfEachKindConverge() async throws {
        // A lost acknowledgement of each method in turn, then a reset, then a 5xx, by rule.
        let plan = FaultPlan([
            FaultRule(.dropResponse, method: "POST", nth: 2), FaultRule(.dropResponse, method: "PATCH", nth: 1),
            FaultRule(.dropResponse, method: "DELETE", nth: 1), FaultRule(.resetMidResponse, method: "PATCH", nth: 3),
            FaultRule(.truncateBody, method: "POST", nth: 3), FaultRule(.status(500), method: "GET", nth: 1),
        ])
        try await withTimeLimit(300) { try await Self.exercise(plan) }
    }

    @Test func aMixOfEveryFaultConverges() async throws {
        let shift = UInt64(ProcessInfo.processInfo.environment["FAULT_SEED"] ?? "") ?? 0
        let rules = Self.faults.map { FaultRule($0, probability: 0.08) }
        try await withTimeLimit(300) { try await Self.exercise(FaultPlan(rules, seed: 99 + shift)) }
    }

    @Test func pushAndPullWhileTheServiceRefusesConnectionsStopWithATypedErrorAndConvergeLater() async throws {
        try await withTimeLimit(300) {
            try await withReliabilityHarness { harness in
                let context = try harness.client()
                let table = context.table("todoitem")
                try await table.insert(["id": "a", "text": "one"])
                _ = try await context.push()
                try await table.update(["id": "a", "text": "two"])
                try await table.insert(["id": "b", "text": "new"])
                try await harness.proxy.refuseConnections(true)
                for _ in 0..<2 {
                    do {
                        _ = try await context.push()
                        Issue.record("push succeeded through a closed port")
                    } catch let error as SyncError {
                        guard case .stopped(.unreachable) = error else { throw error }
                    }
                    await #expect(throws: SyncError.self) { try await table.pull(queryId: "all") }
                    #expect(try context.operations.all().count == 2)
                }
                try await harness.proxy.refuseConnections(false)
                _ = try await context.push()
                try await table.pull(queryId: "all")
                try await expectConverged(context, harness)
            }
        }
    }

    /// Seeds the service, makes local changes, syncs in rounds under `plan` (editing between
    /// rounds), then syncs cleanly and checks the result against the expected values.
    static func exercise(_ plan: FaultPlan) async throws {
        try await withReliabilityHarness { harness in
            let context = try harness.client()
            let table = context.table("todoitem")
            var expected: [String: String?] = [:]  // id → text, nil when deleted

            for index in 0..<5 {
                try await table.insert([
                    "id": .string("s\(index)"), "text": .string("seed \(index)"), "complete": false,
                ])
                expected["s\(index)"] = "seed \(index)"
            }
            _ = try await context.push()
            try await table.pull(queryId: "all")

            for index in 0..<4 {
                try await table.insert(["id": .string("n\(index)"), "text": .string("new \(index)")])
                expected["n\(index)"] = "new \(index)"
            }
            for index in 0..<3 {
                try await table.update(["id": .string("s\(index)"), "text": .string("edited \(index)")])
                expected["s\(index)"] = "edited \(index)"
            }
            try await table.delete(id: "s3")
            expected["s3"] = .some(nil)
            try await table.update(["id": "n0", "text": "new 0 edited"])
            expected["n0"] = "new 0 edited"

            harness.proxy.setPlan(plan)
            for round in 0..<4 {
                do {
                    _ = try await context.push()
                } catch let error as SyncError {
                    _ = error  // a typed stop is an acceptable outcome under a fault
                }
                do {
                    try await table.pull(queryId: "all")
                } catch let error as SyncError {
                    _ = error
                }
                try expectNothingLostOrDuplicated(context, expected: expected, harness: harness, plan: plan)
                if round == 1 {
                    // Edits made between faulted syncs (after a possibly lost acknowledgement).
                    try await table.update(["id": "s0", "text": "edited again"])
                    expected["s0"] = "edited again"
                    try await table.update(["id": "n1", "text": "new 1 edited"])
                    expected["n1"] = "new 1 edited"
                    try await table.update(["id": "s4", "text": "late edit", "complete": true])
                    expected["s4"] = "late edit"
                    try await table.delete(id: "s2")
                    expected["s2"] = .some(nil)
                }
            }

            if ProcessInfo.processInfo.environment["PROXY_LOG"] != nil {
                print("\(plan)\n" + harness.proxy.events.map(\.description).joined(separator: "\n"))
            }
            harness.proxy.setPlan(.passThrough)
            let pushed = try await context.push()
            let conflicted = try context.conflicts.all().map { "\($0)" }
            #expect(pushed.conflicts.isEmpty, "\(plan): conflicts with itself: \(conflicted)")
            #expect(pushed.failed.isEmpty, "\(plan): failed operations")
            try await table.pull(queryId: "all")
            try await expectConverged(context, harness)

            let server = try await harness.serviceRows()
            #expect(server.count == expected.count, "\(plan): the service has \(server.count) rows")
            for (id, text) in expected {
                if let text {
                    #expect(server[id]?["text"]?.stringValue == text, "\(plan): \(id)")
                    #expect(server[id]?["deleted"]?.boolValue != true, "\(plan): \(id) deleted")
                } else {
                    #expect(server[id]?["deleted"]?.boolValue == true, "\(plan): \(id) not deleted")
                }
            }
            try await context.close()
        }
    }

    /// Every expected change is either on the service (seen locally with its version) or still
    /// queued, at most once per item.
    static func expectNothingLostOrDuplicated(
        _ context: SyncContext, expected: [String: String?], harness: ReliabilityHarness, plan: FaultPlan
    ) throws {
        let operations = try context.operations.all()
        let perItem = Dictionary(grouping: operations, by: \.itemId)
        for (id, queued) in perItem {
            #expect(queued.count == 1, "\(plan): \(queued.count) operations queued for \(id)")
        }
        let table = context.table("todoitem")
        for (id, text) in expected where perItem[id] == nil {
            let row = try table.item(id: id)
            if let text {
                #expect(row?["text"]?.stringValue == text, "\(plan): change of \(id) lost")
                #expect(row?["version"]?.stringValue != nil, "\(plan): \(id) has no version but no operation")
            } else {
                #expect(row == nil, "\(plan): delete of \(id) lost")
            }
        }
    }
}
