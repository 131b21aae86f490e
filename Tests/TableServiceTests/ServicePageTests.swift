import Foundation
import HTTPTypes
import Testing

/// The service's own HTML page: tables, rows (soft-deleted too), and versioned edits.
@Suite struct ServicePageTests {
    static func form(_ fields: [String: String]) -> Data {
        Data(
            fields.map { name, value in
                name + "=" + value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            }.joined(separator: "&").utf8)
    }

    static func csrf(in html: String) throws -> String {
        let marker = #"name="_csrf" value=""#
        let start = try #require(html.range(of: marker)).upperBound
        return String(html[start...].prefix { $0 != "\"" })
    }

    static let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    @Test(arguments: Backend.all) func pagesListTablesAndRowsWithSoftDeletedOnesEscaped(_ backend: Backend) async throws
    {
        try await withTestServer(backend, page: true) { server in
            _ = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "<script>alert(1)</script>"])
            _ = try await server.send(.post, "/tables/todoitem", json: ["id": "b", "text": "gone"])
            _ = try await server.send(.delete, "/tables/todoitem/b")
            let index = try await server.send(.get, "/service", headers: [:])
            #expect(index.status == 200)
            #expect(index.text.contains(#"href="/service/tables/todoitem""#))
            let table = try await server.send(.get, "/service/tables/todoitem", headers: [:])
            #expect(table.status == 200)
            #expect(table.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!table.text.contains("<script>alert"))
            #expect(table.text.contains(#"<tr class="deleted">"#))
            let style = try await server.send(.get, "/service/style.css", headers: [:])
            #expect(style.header("Content-Type")?.hasPrefix("text/css") == true)
        }
    }

    @Test(arguments: Backend.all) func editWithTheShownVersionWritesAndAStaleOneSaysSo(_ backend: Backend) async throws
    {
        try await withTestServer(backend, page: true) { server in
            let created = try await server.send(
                .post, "/tables/todoitem", json: ["id": "a", "text": "one", "complete": false])
            let shownVersion = try #require(created.object?["version"] as? String)
            let page = try await server.send(.get, "/service/tables/todoitem/a", headers: [:])
            #expect(page.text.contains(#"name="version" value="\#(shownVersion)""#))
            let token = try Self.csrf(in: page.text)

            let saved = try await server.send(
                .post, "/service/tables/todoitem/a", headers: Self.formHeaders,
                body: Self.form(["_csrf": token, "version": shownVersion, "f.text": "two", "f.complete": "true"]))
            #expect(saved.status == 303)
            let afterSave = try await server.send(.get, "/tables/todoitem/a")
            #expect(afterSave.object?["text"] as? String == "two")
            #expect(afterSave.object?["complete"] as? Bool == true)
            #expect(afterSave.object?["version"] as? String != shownVersion)

            // The same (now stale) form again: nothing is written and the page says why.
            let stale = try await server.send(
                .post, "/service/tables/todoitem/a", headers: Self.formHeaders,
                body: Self.form(["_csrf": token, "version": shownVersion, "f.text": "three"]))
            #expect(stale.status == 409)
            #expect(stale.text.contains("Not saved: this row changed since you opened it"))
            let afterStale = try await server.send(.get, "/tables/todoitem/a")
            #expect(afterStale.object?["text"] as? String == "two")
        }
    }

    @Test(arguments: Backend.all) func deleteAndUndeleteArePostsWithTheVersion(_ backend: Backend) async throws {
        try await withTestServer(backend, page: true) { server in
            let created = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "one"])
            let version = try #require(created.object?["version"] as? String)
            let token = try Self.csrf(in: try await server.send(.get, "/service/tables/todoitem/a", headers: [:]).text)
            #expect(try await server.send(.get, "/service/tables/todoitem/a/delete", headers: [:]).status != 200)
            let deleted = try await server.send(
                .post, "/service/tables/todoitem/a/delete", headers: Self.formHeaders,
                body: Self.form(["_csrf": token, "version": version]))
            #expect(deleted.status == 303)
            #expect(try await server.send(.get, "/tables/todoitem/a").status == 404)
            let deletedPage = try await server.send(.get, "/service/tables/todoitem/a", headers: [:])
            let newVersion = try #require(
                deletedPage.text.range(of: #"name="version" value=""#).map {
                    String(deletedPage.text[$0.upperBound...].prefix { $0 != "\"" })
                })
            let undeleted = try await server.send(
                .post, "/service/tables/todoitem/a/undelete", headers: Self.formHeaders,
                body: Self.form(["_csrf": token, "version": newVersion]))
            #expect(undeleted.status == 303)
            #expect(try await server.send(.get, "/tables/todoitem/a").status == 200)
        }
    }

    @Test(arguments: Backend.all) func formsWithoutTheCSRFTokenAreRefused(_ backend: Backend) async throws {
        try await withTestServer(backend, page: true) { server in
            let created = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "one"])
            let version = try #require(created.object?["version"] as? String)
            for token in ["", "forged"] {
                let reply = try await server.send(
                    .post, "/service/tables/todoitem/a", headers: Self.formHeaders,
                    body: Self.form(["_csrf": token, "version": version, "f.text": "evil"]))
                #expect(reply.status == 403)
            }
            #expect(try await server.send(.get, "/tables/todoitem/a").object?["text"] as? String == "one")
        }
    }

    @Test(arguments: Backend.all) func withAnApplicationKeyThePageAsksForItOnce(_ backend: Backend) async throws {
        try await withTestServer(backend, applicationKey: "s3cret", page: true) { server in
            let locked = try await server.send(.get, "/service", headers: [:])
            #expect(locked.status == 401)
            let token = try Self.csrf(in: locked.text)
            let wrong = try await server.send(
                .post, "/service/key", headers: Self.formHeaders, body: Self.form(["_csrf": token, "key": "nope"]))
            #expect(wrong.status == 401)
            let right = try await server.send(
                .post, "/service/key", headers: Self.formHeaders, body: Self.form(["_csrf": token, "key": "s3cret"]))
            #expect(right.status == 303)
            let cookie = try #require(right.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
            #expect(cookie.hasPrefix("todosync_service_session="))
            #expect(!cookie.contains("s3cret"))
            let unlocked = try await server.send(.get, "/service", headers: [.cookie: cookie])
            #expect(unlocked.status == 200)
        }
    }
}

extension ServicePageTests {
    @Test(arguments: Backend.all) func savingASoftDeletedRowSaysToUndeleteItFirst(_ backend: Backend) async throws {
        try await withTestServer(backend, page: true) { server in
            let created = try await server.send(.post, "/tables/todoitem", json: ["id": "a", "text": "one"])
            let version = try #require(created.object?["version"] as? String)
            let token = try Self.csrf(in: try await server.send(.get, "/service/tables/todoitem/a", headers: [:]).text)
            #expect(try await server.send(.delete, "/tables/todoitem/a").status == 200)

            let saved = try await server.send(
                .post, "/service/tables/todoitem/a", headers: Self.formHeaders,
                body: Self.form(["_csrf": token, "version": version, "f.text": "two"]))
            #expect(saved.status == 409)
            #expect(saved.text.contains("Not saved: the row is soft-deleted. Undelete it first."))
            // Deleting it again is not a conflict but a row that is not there (the error page).
            let deletedAgain = try await server.send(
                .post, "/service/tables/todoitem/a/delete", headers: Self.formHeaders,
                body: Self.form(["_csrf": token, "version": version]))
            #expect(deletedAgain.status == 404)
        }
    }
}
