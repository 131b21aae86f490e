import Foundation
import SyncProtocol
import Testing

@testable import TableService

/// The fast page encoder (rows straight to JSON) writes exactly what the item encoder writes.
@Suite struct PageEncodingTests {
    @Test func rowEncoderMatchesTheItemEncoder() throws {
        let service = try TableService(configuration: .init())
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
            _ = try service.store.insert(into: "mixed", ItemChanges(id: "row-\(index)", version: nil, fields: fields))
        }
        _ = try service.store.delete(from: "mixed", id: "row-3", ifMatch: nil)
        let schema = try #require(service.store.registry.schema(of: "mixed"))
        let options = try QueryOptions(
            queryItems: [("__includeDeleted", "true"), ("$inlinecount", "allpages")], defaultTop: 50, maximumTop: 1000)
        let query = try QueryCompiler.compile(options, schema: schema, resolve: ProtocolStyle.v2.resolver(for: schema))
        let fast = try service.store.page(query, encoder: ItemJSONEncoder(style: .v2))
        let everyColumn = Set(schema.columns.map(\.name))
        let slow = try service.store.page(query, encoder: ItemJSONEncoder(style: .v2, selection: everyColumn))
        #expect(fast.rows == 4)
        #expect(String(decoding: fast.body, as: UTF8.self) == String(decoding: slow.body, as: UTF8.self))
        #expect(try JSONSerialization.jsonObject(with: fast.body) is [String: Any])
    }
}
