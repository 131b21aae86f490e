import Foundation
import Testing

@testable import TableService

/// The keyset cursor of incremental pull is a range scan of the `(updatedAt, id)` index, not a
/// scan of the table from its first row.
@Suite struct QueryPlanTests {
    static func plan(_ query: String, in store: SQLiteTableStore) async throws -> String {
        let items = URLComponents(string: "/?" + query)!.queryItems!.map { ($0.name, $0.value ?? "") }
        let options = try QueryOptions(queryItems: items, defaultTop: 50, maximumTop: 1000)
        let compiled = try await store.compile(options, table: "todoitem", style: .v2)
        return try await store.queryPlan(compiled).joined(separator: " | ")
    }

    @Test func keysetCursorUsesTheUpdatedAtIdIndexAsARange() async throws {
        let store = try SQLiteTableStore(path: nil, clock: TableService.systemClock, tables: ["todoitem"])
        for index in 0..<50 {
            _ = try await store.insert(
                into: "todoitem",
                ItemChanges(id: "i\(index)", version: nil, fields: [.init(name: "text", value: .string("x"))]),
                scope: .all)
        }
        let keyset = try await Self.plan(
            "$filter=(updatedAt%20gt%20datetimeoffset'2026-01-01T00:00:00.000Z')%20or%20(updatedAt%20eq%20datetimeoffset'2026-01-01T00:00:00.000Z'%20and%20id%20gt%20'i1')&$orderby=updatedAt,id&$top=1000&__includeDeleted=true",
            in: store)
        #expect(keyset.contains("USING INDEX todoitem__updatedAt_id (updatedAt>?)"), "\(keyset)")
        #expect(!keyset.contains("TEMP B-TREE"), "\(keyset)")
        let deepPage = try await Self.plan("$orderby=updatedAt,id&$top=10&$skip=20&__includeDeleted=true", in: store)
        #expect(deepPage.contains("SCAN todoitem USING COVERING INDEX todoitem__updatedAt_id"), "\(deepPage)")
        let deepLivePage = try await Self.plan("$orderby=updatedAt,id&$top=10&$skip=20", in: store)
        #expect(deepLivePage.contains("SCAN todoitem USING COVERING INDEX todoitem__updatedAt_id"), "\(deepLivePage)")
        let byID = try await Self.plan("$filter=id%20eq%20'i3'", in: store)
        #expect(byID.contains("USING INDEX sqlite_autoindex_todoitem_1 (id=?)"), "\(byID)")
    }
}
