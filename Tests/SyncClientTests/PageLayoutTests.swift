import Foundation
import GRDB
import Testing

@testable import SyncClient

/// A pulled page's rows become the values of the local table's columns, whatever order each row
/// writes its members in.
@Suite struct PageLayoutTests {
    let table = TableDescription(
        name: "orders", columns: [.init("customer", .text), .init("total", .real), .init("paid", .boolean)])

    func value(_ row: PulledRow, _ column: String) -> DatabaseValue {
        row.values[table.allColumns.firstIndex { $0.name == column }!]
    }

    @Test func rowsWithTheirMembersInAnotherOrderStillFillTheirColumns() throws {
        let page = #"""
            [{"id":"a","customer":"ACME","total":12.5,"paid":false},
             {"paid":true,"total":3,"id":"b","customer":"Bolt"},
             {"id":"c","note":"new","customer":"Corvid","total":7.25},
             {"id":"d","customer":"Dune","total":1,"paid":true}]
            """#
        let (rows, _) = try PageLayout(table).decode(Data(page.utf8))
        #expect(rows.map(\.id) == ["a", "b", "c", "d"])
        #expect(rows.map { value($0, "customer") } == ["ACME", "Bolt", "Corvid", "Dune"].map(\.databaseValue))
        // A real column keeps a whole number as an integer.
        #expect(
            rows.map { value($0, "total") } == [
                (12.5).databaseValue, Int64(3).databaseValue, (7.25).databaseValue, Int64(1).databaseValue,
            ])
        #expect(
            rows.map { value($0, "paid") } == [
                Int64(0).databaseValue, Int64(1).databaseValue, .null, Int64(1).databaseValue,
            ])
        #expect(rows[2].extras.map(\.0) == ["note"])
        #expect([0, 1, 3].allSatisfy { rows[$0].extras.isEmpty })
    }
}
