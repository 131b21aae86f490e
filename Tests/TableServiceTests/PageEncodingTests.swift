import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import TableService

/// The fast page encoders (rows straight to JSON, from SQLite and from PostgreSQL) write exactly
/// what the item encoder writes, on the first page and on a later one, in v2 and in v3.
@Suite struct PageEncodingTests {
    @Test(arguments: Backend.all) func rowEncoderMatchesTheItemEncoder(_ backend: Backend) async throws {
        let store = try await TestStores.open(backend)
        defer { store.close() }
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
        let everyColumn = Set(schema.columns.map(\.name))
        // Pages of every row, of the last rows, and (v3 reading one row past the page) of the first two.
        for (skip, top, rows) in [(0, 50, 4), (1, 50, 3), (0, 2, 2)] {
            for style in [ProtocolStyle.v2, .v3] {
                let options = try QueryOptions(
                    queryItems: [
                        ("__includeDeleted", "true"), ("$inlinecount", "allpages"), ("$count", "true"),
                        ("$orderby", "updatedAt"), ("$skip", "\(skip)"), ("$top", "\(top)"),
                    ], defaultTop: 50, maximumTop: 1000, rules: style.queryRules)
                let query = try await store.compile(options, table: "mixed", style: style)
                let fast = try await store.page(query, encoder: ItemJSONEncoder(style: style))
                let slow = try await store.page(query, encoder: ItemJSONEncoder(style: style, selection: everyColumn))
                #expect(fast.rows == rows)
                #expect(fast.count == 4)
                #expect(fast.hasMore == (style == .v3 ? skip + rows < 4 : nil))
                #expect(String(decoding: fast.items, as: UTF8.self) == String(decoding: slow.items, as: UTF8.self))
                let items = try #require(try JSONSerialization.jsonObject(with: Data(fast.items)) as? [[String: Any]])
                #expect(items.allSatisfy { ($0["createdAt"] != nil) == (style == .v2) })
            }
        }
    }
}
