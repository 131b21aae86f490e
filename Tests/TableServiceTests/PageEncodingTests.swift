import Foundation
import SyncProtocol
import Testing

@testable import TableService

/// The fast page encoder (rows straight to JSON) writes exactly what the item encoder writes.
@Suite struct PageEncodingTests {
    @Test func rowEncoderMatchesTheItemEncoder() async throws {
        let store = try SQLiteTableStore(path: nil, clock: TableService.systemClock, tables: [])
        let rows: [[StoredItem.Field]] = [
            [
                .init(name: "text", value: .string("plain")), .init(name: "n", value: .number(3)),
                .init(name: "flag", value: .bool(true)), .init(name: "later", value: .null),
            ],
            [
                .init(name: "text", value: .string("quote \" back\\slash\nnew line \u{1} é 😀")),
                .init(name: "n", value: .number(-2.75)), .init(name: "flag", value: .bool(false)),
            ],
            [.init(name: "n", value: .number(1e300)), .init(name: "later", value: .string("now text"))],
            [],
        ]
        for (index, fields) in rows.enumerated() {
            _ = try await store.insert(
                into: "mixed", ItemChanges(id: "row-\(index)", version: nil, fields: fields), scope: .all)
        }
        _ = try await store.setDeleted(true, in: "mixed", id: "row-3", ifMatch: nil, scope: .all)
        let schema = try #require(store.schema(of: "mixed"))
        let options = try QueryOptions(
            queryItems: [("__includeDeleted", "true"), ("$inlinecount", "allpages")], defaultTop: 50, maximumTop: 1000)
        let query = try await store.compile(options, table: "mixed", style: .v2)
        let fast = try await store.page(query, encoder: ItemJSONEncoder(style: .v2))
        let everyColumn = Set(schema.columns.map(\.name))
        let slow = try await store.page(query, encoder: ItemJSONEncoder(style: .v2, selection: everyColumn))
        #expect(fast.rows == 4)
        #expect(String(decoding: fast.body, as: UTF8.self) == String(decoding: slow.body, as: UTF8.self))
        #expect(try JSONSerialization.jsonObject(with: fast.body) is [String: Any])
    }
}
