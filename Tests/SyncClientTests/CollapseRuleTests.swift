import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

@Suite(.timeLimit(.minutes(10)))
struct CollapseRuleTests {
    @Test func insertMakesAnIdAndQueuesOneInsert() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let item = try await context.table("todoitem").insert(["text": "milk", "complete": false])
        let id = try #require(item["id"]?.stringValue)
        #expect(UUID(uuidString: id) != nil)
        #expect(item["complete"] == .bool(false))
        #expect(try queueShape(context) == ["insert \(id) pending"])
    }

    @Test func insertOfAnExistingIdIsRefused() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "one"])
        await #expect(throws: SyncError.itemExists(table: "todoitem", id: "a")) {
            try await todo.insert(["id": "a", "text": "two"])
        }
        #expect(try todo.item(id: "a")?.text == "one")
        #expect(try queueShape(context) == ["insert a pending"])
    }

    @Test func insertThenUpdateIsOneInsertWithTheNewValues() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "one"])
        try await todo.update(["id": "a", "text": "two"])
        #expect(try queueShape(context) == ["insert a pending"])
        #expect(try todo.item(id: "a")?.text == "two")
    }

    @Test func insertThenDeleteLeavesNothingToSend() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "one"])
        try await todo.delete(id: "a")
        #expect(try queueShape(context).isEmpty)
        #expect(try todo.item(id: "a") == nil)
    }

    @Test func attemptedInsertThenDeleteQueuesTheDelete() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "one"])
        await #expect(throws: SyncError.self) { try await context.push() }
        #expect(try queueShape(context) == ["insert a attempted"])
        try await todo.delete(id: "a")
        #expect(try queueShape(context) == ["delete a attempted"])
    }

    @Test func updateThenUpdateIsOneUpdate() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.update(["id": "a", "text": "one"])
        try await todo.update(["id": "a", "complete": true])
        #expect(try queueShape(context) == ["update a pending"])
        let row = try #require(try todo.item(id: "a"))
        #expect(row.text == "one")
        #expect(row["complete"] == .bool(true))
    }

    @Test func updateThenDeleteIsOneDelete() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.update(["id": "a", "text": "one"])
        try await todo.delete(id: "a")
        #expect(try queueShape(context) == ["delete a pending"])
        #expect(try context.operations.all().first?.item?.text == "one")
    }

    @Test func deleteThenInsertIsOneUpdate() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.update(["id": "a", "text": "one"])
        try await todo.delete(id: "a")
        try await todo.insert(["id": "a", "text": "again"])
        #expect(try queueShape(context) == ["update a pending"])
        #expect(try todo.item(id: "a")?.text == "again")
    }

    @Test func updateThenInsertIsRefused() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.update(["id": "a", "text": "one"])
        await #expect(throws: SyncError.self) { try await todo.insert(["id": "a", "text": "two"]) }
        #expect(try queueShape(context) == ["update a pending"])
    }

    @Test func deleteThenUpdateIsRefusedWithAMessage() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.update(["id": "a", "text": "one"])
        try await todo.delete(id: "a")
        let error = await #expect(throws: SyncError.self) { try await todo.update(["id": "a", "text": "two"]) }
        #expect(error == .changeNotAllowed(table: "todoitem", id: "a", queued: .delete, new: .update))
        #expect(error?.description.contains("no longer exists") == true)
        #expect(try queueShape(context) == ["delete a pending"])
    }

    @Test func deleteOfAMissingItemIsRefused() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        await #expect(throws: SyncError.itemNotFound(table: "todoitem", id: "zz")) {
            try await context.table("todoitem").delete(id: "zz")
        }
    }

    @Test func operationsOfDifferentItemsKeepTheirOrder() async throws {
        let context = try SyncContext.temporary(in: TemporaryFolder())
        let todo = context.table("todoitem")
        try await todo.insert(["id": "a", "text": "1"])
        try await todo.insert(["id": "b", "text": "2"])
        try await todo.update(["id": "a", "text": "3"])
        #expect(try queueShape(context) == ["insert a pending", "insert b pending"])
    }
}
