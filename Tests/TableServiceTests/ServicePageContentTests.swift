import SyncProtocol
import Testing

@testable import TableService

/// What the service's pages show, computed from a table's schema and rows, without a server.
@Suite struct ServicePageContentTests {
    static let schema = TableSchema(
        name: "todoitem",
        userColumns: [
            Column(name: "text", type: .string, isSystem: false),
            Column(name: "complete", type: .boolean, isSystem: false),
        ])

    static func item(_ id: String, text: JSONValue, complete: JSONValue, deleted: Bool = false) -> StoredItem {
        StoredItem(
            id: id, createdAt: 0, updatedAt: 1000, version: "v-\(id)", deleted: deleted,
            fields: [.init(name: "text", value: text), .init(name: "complete", value: complete)])
    }

    @Test func tablePageShowsSystemValuesInMonospaceNullsAsNullAndSaysWhenItIsCut() {
        let items = [
            Self.item("a", text: .string("one"), complete: .null),
            Self.item("b", text: .null, complete: .bool(true), deleted: true),
        ]
        let page = ServiceTablePage(Self.schema, items: items, limit: 2) { "/service/tables/todoitem/\($0)" }
        #expect(page.columns == ["id", "updatedAt", "version", "deleted", "text", "complete"])
        #expect(page.summary == "The 2 most recently changed rows.")
        let first = page.rows[0].cells
        #expect(first.prefix(3).allSatisfy(\.mono) && !first[3].mono)
        #expect(first.map(\.text) == ["a", "1970-01-01T00:00:01.000Z", "v-a", "false", "one", "null"])
        #expect(first.map(\.isNull) == [false, false, false, false, false, true])
        #expect(page.rows[1].deleted && page.rows[1].href == "/service/tables/todoitem/b")
        let uncut = ServiceTablePage(Self.schema, items: items, limit: 500) { $0 }
        #expect(uncut.summary == "2 rows.")
    }

    @Test func rowPageOffersBooleansAsAMenuAndNullsAsEmptyFields() {
        let page = ServiceRowPage(
            Self.schema, item: Self.item("a", text: .null, complete: .bool(false)), tableHref: "/t", rowHref: "/t/a",
            conflict: nil)
        let text = page.fields[0]
        let complete = page.fields[1]
        #expect(!text.isBoolean && text.isNull && text.value == "" && text.type == "string")
        #expect(complete.isBoolean && complete.isFalse && !complete.isTrue && !complete.isNull)
        #expect(page.item.updatedAt == "1970-01-01T00:00:01.000Z" && page.conflict == nil)
    }
}
