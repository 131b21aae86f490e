import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10)))
struct QueuePageTests {
    @Test func pagesOfTheQueueVisitEveryOperationOnceInPushOrder() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todos = context.table("todoitem")
        // In one transaction: 250 durable commits took over a minute on a loaded machine's disk.
        _ = try await todos.insert((0..<250).map { ["id": .string("t\($0)"), "text": .string("todo \($0)")] })
        let all = try context.operations.all().map(\.id)
        var seen: [Int64] = []
        var page = try context.operations.page(.first, limit: 100)
        #expect(!page.hasEarlier && page.total == 250)
        while true {
            seen += page.entries.map(\.operation.id)
            #expect(page.entries.allSatisfy { $0.localItem?["text"] != nil })
            guard page.hasLater, let last = seen.last else { break }
            page = try context.operations.page(.after(last), limit: 100)
            #expect(page.hasEarlier)
        }
        #expect(seen == all)

        var back: [Int64] = []
        page = try context.operations.page(.last, limit: 100)
        #expect(!page.hasLater && page.entries.count == 100)
        while true {
            back = page.entries.map(\.operation.id) + back
            guard page.hasEarlier, let first = page.entries.first?.operation.id else { break }
            page = try context.operations.page(.before(first), limit: 100)
        }
        #expect(back == all)
    }
}
