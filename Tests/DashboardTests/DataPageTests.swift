import Foundation
import HTTPServer
import HTTPTypes
import SyncClient
import SyncProtocol
import TestSupport
import Testing

@testable import Dashboard

/// `/data`, `/data/{table}` and `/api/data/...`: any table of the service, every column, on a real
/// dashboard and its embedded service.
@Suite(.timeLimit(.minutes(10))) struct DataPageTests {
    /// A dashboard syncing `todoitem` and `orders`, with order `o1` pulled from its service.
    func ordersDashboard() async throws -> TestDashboard {
        let harness = try await TestDashboard { $0.tables = ["todoitem", "orders"] }
        let service = TableClient(base: harness.url)
        _ = try await service.insert(
            ["id": "o1", "customer": "ACME", "total": 12.5, "paid": false, "due": "2026-12-01T09:30:00.000Z"],
            table: "orders")
        #expect(try await harness.submit("/sync", ["back": "/data"]).status == 303)
        await harness.dashboard.waitUntilIdle()
        #expect(try harness.dashboard.context.table("orders").item(id: "o1") != nil)
        return harness
    }

    @Test func theTablesPageListsEachTableWithRowsPendingAndConflicts() async throws {
        let harness = try await ordersDashboard()
        try await harness.dashboard.context.table("orders").update(["id": "o1", "total": 13])
        let page = try await harness.client.send(.get, "/data")
        #expect(page.status == 200)
        #expect(page.text.contains(#"<a href="/data/orders">orders</a>"#))
        #expect(page.text.contains(#"<a href="/data/todoitem">todoitem</a>"#))
        let json = try await harness.client.send(.get, "/api/data")
        let tables = try #require(try JSONSerialization.jsonObject(with: json.body) as? [String: Any])
        let orders = try #require((tables["tables"] as? [[String: Any]])?.first { $0["name"] as? String == "orders" })
        #expect(orders["rows"] as? Int == 1 && orders["pending"] as? Int == 1 && orders["conflicts"] as? Int == 0)
        await harness.stop()
    }

    @Test func theEditorHasOneInputPerColumnByTypeAndSavesOnlyWhatChanged() async throws {
        let harness = try await ordersDashboard()
        let editor = try await harness.client.send(.get, "/data/orders/o1")
        #expect(editor.status == 200)
        #expect(editor.text.contains(#"name="field:paid" value="true""#) && editor.text.contains(#"type="checkbox""#))
        #expect(editor.text.contains(#"type="number" step="any" name="field:total" value="12.5""#))
        #expect(
            editor.text.contains(
                #"type="datetime-local" step="0.001" name="field:due" value="2026-12-01T09:30:00.000""#))
        #expect(editor.text.contains(#"type="text" name="field:customer" value="ACME""#))
        let saved = try await harness.submit(
            "/data/orders/o1",
            ["field:customer": "ACME", "field:total": "13", "field:due": "2026-12-01T09:30:00.000"])
        #expect(saved.status == 303)
        #expect(saved.headers["location"] == "/data/orders")
        let orders = harness.dashboard.context.table("orders")
        let item = try #require(try orders.item(id: "o1"))
        #expect(item["total"] == 13 && item["customer"] == "ACME" && item["paid"] == false)
        #expect(item["due"] == "2026-12-01T09:30:00.000Z")
        #expect(try orders.operations().map(\.kind) == [.update])
        let list = try await harness.client.send(.get, "/data/orders")
        #expect(list.text.contains("Saved total of o1 locally"))
        #expect(list.text.contains("pending update"))
        await harness.stop()
    }

    @Test(arguments: [("field:total", "abc", "total"), ("field:due", "2026-13-45T00:00", "due")])
    func aValueThatDoesNotFitIsShownAgainAsTypedAndNothingIsWritten(
        field: String, value: String, column: String
    )
        async throws
    {
        let harness = try await ordersDashboard()
        let before = try harness.dashboard.context.table("orders").item(id: "o1")
        let refused = try await harness.submit("/data/orders/o1", [field: value, "field:customer": "Changed"])
        #expect(refused.status == 422)
        #expect(refused.text.contains("value=\"\(value)\""))
        #expect(refused.text.contains("Changed"))
        #expect(refused.text.contains("“\(column)”"))
        #expect(try harness.dashboard.context.table("orders").item(id: "o1") == before)
        #expect(try harness.dashboard.context.operations.all().isEmpty)
        let add = try await harness.submit("/data/orders", [field: value, "field:customer": "New"])
        #expect(add.status == 422)
        #expect(add.text.contains("value=\"\(value)\"") && add.text.contains("Nothing was saved"))
        #expect(try harness.dashboard.context.table("orders").count() == 1)
        #expect(try harness.dashboard.context.operations.all().isEmpty)
        await harness.stop()
    }

    @Test func addingAndDeletingARowAskFirstAndSayWhatHappened() async throws {
        let harness = try await ordersDashboard()
        let added = try await harness.submit(
            "/data/orders", ["field:customer": "Bolt", "field:total": "7", "field:paid": "true"])
        #expect(added.status == 303)
        let location = try #require(added.headers["location"])
        #expect(location.hasPrefix("/data/orders/"))
        let id = String(location.dropFirst("/data/orders/".count))
        let row = try #require(try harness.dashboard.context.table("orders").item(id: id))
        #expect(row["customer"] == "Bolt" && row["total"] == 7 && row["paid"] == true)
        let confirm = try await harness.submit("/data/orders/o1/delete", [:])
        #expect(confirm.status == 200)
        #expect(confirm.text.contains("Delete this row?"))
        #expect(try harness.dashboard.context.table("orders").item(id: "o1") != nil)
        let deleted = try await harness.submit("/data/orders/o1/delete", ["confirm": "yes"])
        #expect(deleted.status == 303)
        #expect(try harness.dashboard.context.table("orders").item(id: "o1") == nil)
        let list = try await harness.client.send(.get, "/data/orders")
        #expect(list.text.contains("Deleted o1 from orders locally"))
        await harness.stop()
    }

    /// A table never pulled has no column known here: its Add form asks for one by name, and a row
    /// added with it is stored with the column, typed by its value, and queued.
    @Test func aTableWithNoKnownColumnIsGivenOneByTheAddForm() async throws {
        try await withTestDashboard(configure: { $0.tables = ["todoitem", "orders"] }) { harness in
            let list = try await harness.client.send(.get, "/data/orders")
            #expect(list.status == 200)
            #expect(list.text.contains("No column of this table is known here yet"))
            #expect(list.text.contains(#"name="new-column""#) && list.text.contains(#"name="new-value""#))
            let added = try await harness.submit("/data/orders", ["new-column": "total", "new-value": "12.5"])
            #expect(added.status == 303)
            let id = String(try #require(added.headers["location"]).dropFirst("/data/orders/".count))
            let orders = harness.dashboard.context.table("orders")
            #expect(try orders.item(id: id)?["total"] == 12.5)
            #expect(try harness.dashboard.context.description(of: "orders").columnType("total") == .real)
            #expect(try orders.operations().map(\.kind) == [.insert])
            // Its UUID is shortened in the list and the queue, whole in the title.
            let shown = #"title="\#(id)">\#(id.prefix(8))…</"#
            #expect(try await harness.client.send(.get, "/data/orders").text.contains(shown))
            #expect(try await harness.client.send(.get, "/operations").text.contains(shown))
            // The row's page has the column's own field now, and still offers another.
            let editor = try await harness.client.send(.get, "/data/orders/\(id)")
            #expect(editor.text.contains(#"name="field:total" value="12.5""#))
            #expect(editor.text.contains("Another column") && !editor.text.contains("No column of this table"))
            let another = try await harness.submit("/data/orders/\(id)", ["new-column": "paid", "new-value": "false"])
            #expect(another.status == 303)
            #expect(try orders.item(id: id)?["paid"] == false)
        }
    }

    @Test(arguments: [
        ("total", "1", "a column already"), ("version", "x", "kept by the service"),
        ("rowid", "1", "oid and _rowid_"), ("two words", "1", "letters, digits and underscores"),
        ("", "orphan", "Name the column"),
    ])
    func aNewColumnTheServiceCouldNotHoldIsRefusedAndNothingIsWritten(
        name: String, value: String, message: String
    ) async throws {
        let harness = try await ordersDashboard()
        let before = try harness.dashboard.context.table("orders").item(id: "o1")
        let edit = try await harness.submit("/data/orders/o1", ["new-column": name, "new-value": value])
        #expect(edit.status == 422)
        #expect(edit.text.contains(message) && edit.text.contains("value=\"\(value)\""))
        let add = try await harness.submit(
            "/data/orders", ["field:customer": "New", "new-column": name, "new-value": value])
        #expect(add.status == 422)
        #expect(add.text.contains(message) && add.text.contains("Nothing was saved"))
        #expect(try harness.dashboard.context.table("orders").item(id: "o1") == before)
        #expect(try harness.dashboard.context.table("orders").count() == 1)
        #expect(try harness.dashboard.context.operations.all().isEmpty)
        await harness.stop()
    }

    @Test func theListSearchesTextColumnsFiltersFlagsAndPagesNewestFirst() async throws {
        let harness = try await ordersDashboard()
        let orders = harness.dashboard.context.table("orders")
        for index in 0..<60 {
            try await orders.insert([
                "id": .string(String(format: "n%02d", index)), "customer": .string("customer \(index)"),
                "paid": .bool(index % 2 == 0),
            ])
        }
        let first = try await harness.client.send(.get, "/data/orders")
        #expect(first.text.contains(">n59<") && !first.text.contains(">o1<"))
        #expect(first.text.contains("?older="))
        let found = try await harness.client.send(.get, "/data/orders?q=customer%2017")
        #expect(found.text.contains(">n17<") && !found.text.contains(">n16<"))
        let paid = try await harness.client.send(.get, "/data/orders?flag=paid&is=true")
        #expect(paid.text.contains(">n58<") && !paid.text.contains(">n59<"))
        #expect(try await harness.client.send(.get, "/data/orders?flag=customer&is=true").status == 400)
        await harness.stop()
    }

    @Test func anUnknownTableIsA404NamingIt() async throws {
        try await withTestDashboard { harness in
            let page = try await harness.client.send(.get, "/data/nope")
            #expect(page.status == 404)
            #expect(page.text.contains("nope"))
            let api = try await harness.client.send(.get, "/api/data/nope")
            #expect(api.status == 404)
            #expect(api.text.contains("'nope'"))
            #expect(try await harness.client.send(.get, "/data/%3Cscript%3E").status == 404)
        }
    }

    @Test func hostileColumnNamesAndValuesAreEscapedAndEditable() async throws {
        let harness = try await ordersDashboard()
        let orders = harness.dashboard.context.table("orders")
        try await orders.insert(["id": "h", "<script>": "<b>bold</b>", "__proto__": "proto", "it's": true])
        for path in ["/data/orders", "/data/orders/h"] {
            let page = try await harness.client.send(.get, path)
            #expect(page.status == 200, "\(path)")
            #expect(!page.text.contains("<script>") && !page.text.contains("<b>bold"), "\(path)")
            #expect(page.text.contains("&lt;script&gt;"), "\(path)")
        }
        let saved = try await harness.submit(
            "/data/orders/h", ["field:<script>": "plain", "field:__proto__": "proto", "field:it's": "true"])
        #expect(saved.status == 303)
        #expect(try orders.item(id: "h")?["<script>"] == "plain")
        #expect(try orders.item(id: "h")?["it's"] == true)
        await harness.stop()
    }

    @Test func theAPIGivesAndTakesTheSameTypedJSON() async throws {
        let harness = try await ordersDashboard()
        let token = try await harness.csrfToken()
        let list = try await harness.client.send(.get, "/api/data/orders")
        let answer = try #require(try JSONSerialization.jsonObject(with: list.body) as? [String: Any])
        let items = try #require(answer["items"] as? [[String: Any]])
        #expect(items.first?["total"] as? Double == 12.5 && items.first?["paid"] as? Bool == false)
        let columns = try #require(answer["columns"] as? [[String: String]])
        #expect(columns.contains(["name": "due", "type": "date"]))
        let forged = try await harness.client.send(.post, "/api/data/orders", json: Data(#"{"customer":"X"}"#.utf8))
        #expect(forged.status == 403)
        let headers: HTTPFields = [.init("X-CSRF-Token")!: token]
        let created = try await harness.client.send(
            .post, "/api/data/orders", json: Data(#"{"id":"o2","customer":"Bolt","total":7}"#.utf8), headers: headers)
        #expect(created.status == 201)
        let bad = try await harness.client.send(
            .patch, "/api/data/orders/o2", json: Data(#"{"total":"abc"}"#.utf8), headers: headers)
        #expect(bad.status == 422)
        #expect(bad.text.contains("'total'"))
        let patched = try await harness.client.send(
            .patch, "/api/data/orders/o2", json: Data(#"{"total":8,"region":"north"}"#.utf8), headers: headers)
        #expect(patched.status == 200)
        let one = try await harness.client.send(.get, "/api/data/orders/o2")
        let item = try #require(try JSONSerialization.jsonObject(with: one.body) as? [String: Any])
        #expect(item["total"] as? Double == 8 && item["region"] as? String == "north")
        let deleted = try await harness.client.send(.delete, "/api/data/orders/o2", headers: headers)
        #expect(deleted.status == 200)
        #expect(try harness.dashboard.context.table("orders").item(id: "o2") == nil)
        await harness.stop()
    }

    @Test func theTablesSettingIsSavedInTheStoreAndRefusesBadNames() async throws {
        try await withTestDashboard { harness in
            #expect(try harness.dashboard.context.syncedTables() == ["todoitem"])
            let bad = try await harness.submit("/settings/tables", ["tables": "todoitem no-dash"])
            #expect(bad.status == 422)
            #expect(bad.text.contains("no-dash") && bad.text.contains("letters, digits and underscores"))
            #expect(try harness.dashboard.context.syncedTables() == ["todoitem"])
            let saved = try await harness.submit("/settings/tables", ["tables": "todoitem, orders"])
            #expect(saved.status == 303)
            #expect(try harness.dashboard.context.syncedTables() == ["todoitem", "orders"])
            let settings = try await harness.client.send(.get, "/settings")
            #expect(settings.text.contains(#"value="todoitem orders""#))
            let token = try await harness.csrfToken()
            let api = try await harness.client.send(
                .post, "/api/settings", json: Data(#"{"tables":["orders","todoitem"]}"#.utf8),
                headers: [.init("X-CSRF-Token")!: token])
            #expect(api.status == 200)
            let read = try await harness.client.send(.get, "/api/settings")
            #expect(read.text.contains(#""orders""#))
            #expect(try harness.dashboard.context.syncedTables() == ["orders", "todoitem"])
        }
    }

    @Test func aRowWithoutALabelIsTitledByItsIdAsTheListsShowIt() {
        let id = "5d723afe-0b4c-4e57-9d0c-75b2d7551387"
        #expect(Display.title(["total": 3], table: "orders", id: id) == "5d723afe…")
        #expect(Display.title(["text": "milk"], table: "orders", id: "o1") == "o1", "orders have no label column")
        #expect(Display.title(["text": "milk"], table: "todoitem", id: id) == "milk")
        #expect(Display.title(["text": ""], table: "todoitem", id: "t1") == "t1")
    }

    @Test func theConflictPageShowsEveryColumnOfANonTodoTable() async throws {
        let harness = try await ordersDashboard()
        let context = harness.dashboard.context
        try await context.conflicts.setPolicy(.ask, for: "orders")
        let patch = try await harness.client.send(
            .patch, "/tables/orders/o1", json: Data(#"{"total":20,"due":"2027-01-01T00:00:00.000Z"}"#.utf8),
            headers: [ProtocolHeader.apiVersion: "2.0.0"])
        #expect(patch.status == 200)
        try await context.table("orders").update(["id": "o1", "total": 30])
        _ = try await context.push()
        let conflict = try #require(try context.conflicts.all().first)
        let page = try await harness.client.send(.get, "/conflicts/\(conflict.operation.id)")
        #expect(page.status == 200)
        for column in ["customer", "total", "paid", "due"] { #expect(page.text.contains(column), "\(column)") }
        // Dates as the lists show them, in every copy and in the per-field pick; a row, not a todo.
        #expect(page.text.contains("2027-01-01 00:00:00 UTC") && page.text.contains("2026-12-01 09:30:00 UTC"))
        #expect(!page.text.contains("2027-01-01T00:00:00.000Z") && !page.text.contains("2026-12-01T09:30:00.000Z"))
        #expect(page.text.contains("Someone changed this row on the service"))
        #expect(page.text.contains(#"Conflict on <span title="o1">“o1”</span>"#))
        // The list says which table, and each copy by the values in which they differ.
        let list = try await harness.client.send(.get, "/conflicts")
        #expect(list.status == 200 && list.text.contains(#"title="o1">o1</span> <span class="muted">in orders"#))
        #expect(list.text.contains("total: 30") && list.text.contains("due: 2027-01-01 00:00:00 UTC, total: 20"))
        let resolved = try await harness.submit("/conflicts/\(conflict.operation.id)/resolve", ["choice": "use-client"])
        #expect(resolved.status == 303)
        await harness.dashboard.waitUntilIdle()
        let journal = try await harness.client.send(.get, "/journal")
        #expect(journal.status == 200)
        #expect(journal.text.contains("orders") && journal.text.contains("total"))
        #expect(journal.text.contains("2027-01-01 00:00:00 UTC") && !journal.text.contains("2027-01-01T00:00:00.000Z"))
        await harness.stop()
    }

    @Test func aSyncedTableTheServiceLacksIsNamedAndTheOthersStillSync() async throws {
        try await withTestDashboard(configure: { $0.tables = ["todoitem", "missing"] }) { harness in
            _ = try await TableClient(base: harness.url).insert(["id": "t", "text": "on the service"])
            #expect(try await harness.submit("/sync", ["back": "/"]).status == 303)
            await harness.dashboard.waitUntilIdle()
            #expect(try harness.dashboard.context.table("todoitem").item(id: "t") != nil)
            let page = try await harness.client.send(.get, "/")
            #expect(page.text.contains("the service has no table “missing”"))
        }
    }

    @Test func theTodoEditorIsTheRecordViewAndEditsEveryColumnOfTodoitem() async throws {
        try await withTestDashboard { harness in
            let todos = harness.dashboard.context.table("todoitem")
            try await todos.insert(["id": "t", "text": "buy milk", "priority": 2])
            let page = try await harness.client.send(.get, "/items/t")
            #expect(page.text.contains(#"name="field:priority" value="2""#))
            #expect(page.text.contains(#"type="checkbox" id="field-1" name="field:complete""#))
            let saved = try await harness.submit("/items/t", ["field:text": "buy milk", "field:priority": "3"])
            #expect(saved.status == 303 && saved.headers["location"] == "/")
            #expect(try todos.item(id: "t")?["priority"] == .number(3))
        }
    }

    @Test func everyTableShowsDatesBooleansNumbersAndSyncStatesAsTheTodoListDoes() async throws {
        let harness = try await ordersDashboard()
        try await harness.dashboard.context.table("orders").update(["id": "o1", "total": 13])
        let list = try await harness.client.send(.get, "/data/orders")
        #expect(list.text.contains(#"<td class="num">13</td>"#))
        #expect(list.text.contains(#"action="/data/orders/o1/set""#) && list.text.contains(#"role="checkbox""#))
        #expect(!list.text.contains("T09:30:00.000Z"))
        #expect(list.text.contains(#"<td class="date">2026-12-01 09:30:00 UTC</td>"#))
        #expect(list.text.contains("pending update"))
        await harness.stop()
    }
}
