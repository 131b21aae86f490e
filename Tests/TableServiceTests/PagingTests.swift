import Foundation
import HTTPTypes
import Testing

/// Pages and their `Link` headers.
@Suite struct PagingTests {
    static func insert(_ count: Int, into table: String, on server: TestServer) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in stride(from: worker, to: count, by: 4) {
                        let reply = try await server.send(
                            .post, "/tables/\(table)",
                            json: ["id": String(format: "row-%05d", index), "n": index, "even": index % 2 == 0])
                        #expect(reply.status == 201)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test(arguments: Backend.all) func followingLinkThroughPagesOfAThousandReturnsEachRowOnce(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            try await Self.insert(2500, into: "paged", on: server)

            var next: String? = "/tables/paged?$top=1000&$orderby=updatedAt,id"
            var seen: [String] = []
            var pages = 0
            while let target = next {
                let page = try await server.send(.get, target)
                #expect(page.status == 200)
                seen += try #require(page.array).compactMap { $0["id"] as? String }
                pages += 1
                next = try page.header("Link").map { link in
                    #expect(link.hasPrefix("<\(server.url)/tables/paged?"))
                    #expect(link.hasSuffix(">; rel=next"))
                    let url = try #require(link.split(separator: ">").first?.dropFirst())
                    return String(url)
                }
            }
            #expect(pages == 3)
            #expect(seen.count == 2500)
            #expect(Set(seen).count == 2500)
        }
    }

    /// A page named by `$skip` is the same whether the service reaches it by skipping rows or by
    /// starting after where it ended the previous page: inserts, changes, deletes and undeletes
    /// between the pages, through either instance, never shift it.
    @Test(arguments: Backend.all, ["updatedAt,id", "createdAt", ""])
    func skipPageIsTheSameAfterWritesBetweenPages(_ backend: Backend, order: String) async throws {
        try await withTestServer(backend) { server in
            try await withInstanceSharing(server) { other in
                try await Self.insert(40, into: "shifting", on: server)
                let orderBy = order.isEmpty ? "" : "&$orderby=\(order)"
                func ids(_ target: String) async throws -> [String] {
                    try #require(try await server.send(.get, target).array).compactMap { $0["id"] as? String }
                }
                let writes: [(HTTPRequest.Method, String, [String: Any]?)] = [
                    (.post, "/tables/shifting", ["n": 1000]),
                    (.patch, "/tables/shifting/row-00003", ["n": 3003]),
                    (.delete, "/tables/shifting/row-00005", nil),
                    (.post, "/tables/shifting/row-00005", nil),
                    (.delete, "/tables/shifting/row-00030", nil),
                ]
                for (index, (method, path, body)) in writes.enumerated() {
                    let skip = index.isMultiple(of: 2) ? 10 : 20
                    _ = try await ids("/tables/shifting?$top=10&$skip=\(skip - 10)\(orderBy)")
                    let instance = index.isMultiple(of: 2) ? server : other
                    let reply =
                        if let body {
                            try await instance.send(method, path, json: body)
                        } else {
                            try await instance.send(method, path)
                        }
                    #expect((200..<300).contains(reply.status), "\(method) \(path): \(reply.text)")
                    let all = try await ids("/tables/shifting?$top=1000\(orderBy)")
                    let page = try await ids("/tables/shifting?$top=10&$skip=\(skip)\(orderBy)")
                    #expect(
                        page == Array(all[skip..<min(skip + 10, all.count)]), "\(method) \(path) before $skip=\(skip)")
                }
            }
        }
    }

    @Test(arguments: Backend.all) func keysetCursorPagesReturnEachRowOnce(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            try await Self.insert(700, into: "keyset", on: server)
            var cursor: (updatedAt: String, id: String)?
            var seen: [String] = []
            // Bounded: a cursor that did not move on would otherwise read the same page for ever.
            while seen.count <= 700 {
                var filter = ""
                if let cursor {
                    filter =
                        "&$filter="
                        + "(updatedAt gt datetimeoffset'\(cursor.updatedAt)') or (updatedAt eq datetimeoffset'\(cursor.updatedAt)' and id gt '\(cursor.id)')"
                        .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                }
                let page = try await server.send(
                    .get, "/tables/keyset?$orderby=updatedAt,id&$top=250&__includeDeleted=true" + filter)
                let rows = try #require(page.array)
                guard let last = rows.last else { break }
                seen += rows.compactMap { $0["id"] as? String }
                cursor = (last["updatedAt"] as! String, last["id"] as! String)
            }
            #expect(seen.count == 700)
            #expect(Set(seen).count == 700)
        }
    }

    @Test(arguments: Backend.all) func inlineCountGivesResultsAndTheTotal(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            try await Self.insert(30, into: "counted", on: server)
            let page = try await server.send(
                .get, "/tables/counted?$top=10&$skip=5&$inlinecount=allpages&$filter=even%20eq%20true")
            let body = try #require(page.object)
            #expect((body["results"] as? [Any])?.count == 10)
            #expect(body["count"] as? Int == 15)
        }
    }

    @Test(arguments: Backend.all) func linkKeepsTheQueryAndAdvancesSkip(_ backend: Backend) async throws {
        try await withTestServer(backend) { server in
            try await Self.insert(5, into: "linked", on: server)
            let page = try await server.send(
                .get, "/tables/linked?$filter=n%20ge%201&$top=2&$skip=1&ZUMO-API-VERSION=2.0.0")
            let link = try #require(page.header("Link"))
            #expect(
                link
                    == "<\(server.url)/tables/linked?$filter=n%20ge%201&$top=2&ZUMO-API-VERSION=2.0.0&$skip=3>; rel=next"
            )
            let last = try await server.send(.get, "/tables/linked?$top=10")
            #expect(last.header("Link") == nil)
        }
    }

    @Test(arguments: Backend.all) func topAboveTheMaximumIsRefusedWithTheOfficialMessage(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            let reply = try await server.send(.get, "/tables/todoitem?$top=1001")
            #expect(reply.status == 400)
            #expect(reply.object?["error"] as? String == "You cannot request more than 1000 records")
        }
    }

    @Test(arguments: Backend.all) func linkSentWholeInBracketsAsTheQueryGivesTheNextPage(
        _ backend: Backend
    ) async throws {
        try await withTestServer(backend) { server in
            try await Self.insert(6, into: "todoitem", on: server)
            let first = try await server.send(.get, "/tables/todoitem?$top=2&$orderby=id&$filter=n%20ge%201")
            #expect(first.array?.compactMap { $0["id"] as? String } == ["row-00001", "row-00002"])
            let link = try #require(first.header("Link")?.split(separator: ";").first).trimmingCharacters(
                in: .whitespaces)
            #expect(link.hasPrefix("<") && link.hasSuffix(">"))
            // As the official JavaScript client sends it: the Link's URL, brackets and all, as the query.
            let bracketed = "%3C" + link.dropFirst().dropLast() + "%3E"
            let second = try await server.send(.get, "/tables/todoitem?" + bracketed)
            #expect(second.status == 200, "\(second.text)")
            #expect(second.array?.compactMap { $0["id"] as? String } == ["row-00003", "row-00004"])
            let next = try #require(second.header("Link")?.split(separator: ";").first).dropFirst().dropLast()
            let third = try await server.send(.get, "/tables/todoitem?%3C" + next + "%3E")
            #expect(third.status == 200, "\(third.text)")
            #expect(third.array?.compactMap { $0["id"] as? String } == ["row-00005"], "\(next) \(third.text)")

            let unclosed = try await server.send(.get, "/tables/todoitem?%3C\(server.url)/tables/todoitem?$skip=2")
            #expect(unclosed.status == 400)
            let otherTable = try await server.send(.get, "/tables/todoitem?%3C\(server.url)/tables/other?$skip=2%3E")
            #expect(otherTable.status == 400)
            #expect((otherTable.object?["error"] as? String)?.contains("another address") == true)
        }
    }
}
