import Foundation
import HTTPServer
import HTTPTypes
import Testing

/// Route groups, through the responder in process: a group's middleware runs for its routes alone,
/// its error renderer renders its routes' errors and the 404 and 405 under its prefix.
@Suite(.timeLimit(.minutes(10))) struct RouteGroupTests {
    /// Refuses every request without `X-Pass`, and marks every answer it sees.
    struct Checkpoint: Middleware {
        let mark: String
        func intercept(_ request: inout Request) throws -> Response? {
            guard request.headers[HTTPField.Name("X-Pass")!] != nil else {
                throw HTTPError(.forbidden, "no pass")
            }
            return nil
        }
        func finish(_ request: Request, _ response: inout Response) {
            response.headers[HTTPField.Name("X-Seen")!] = (response.headers[HTTPField.Name("X-Seen")!] ?? "") + mark
        }
    }

    static func responder() -> Responder {
        var router = Router()
        router.errorRenderer = { _, error in .text("page: \(error.message)", status: error.status) }
        router.get("/open") { _ in .text("open") }
        router.group { pages in
            pages.use(Checkpoint(mark: "pages"))
            pages.get("/page") { _ in .text("page") }
        }
        router.group("/api") { api in
            api.use(Checkpoint(mark: "api"))
            api.errorRenderer = ErrorRenderer.json
            api.get("/items/:id") { request in .text("item \(request.parameters["id"] ?? "")") }
            api.get("/broken") { _ in throw HTTPError(.conflict, "broken") }
            api.group("/v2") { v2 in
                v2.use(Checkpoint(mark: "v2"))
                v2.get("/ping") { _ async in .text("pong") }
            }
        }
        return router.buildResponder()
    }

    static func send(_ target: String, method: HTTPRequest.Method = .get, pass: Bool = true) async throws -> Response {
        var headers: HTTPFields = [:]
        if pass { headers[HTTPField.Name("X-Pass")!] = "1" }
        return await responder().respond(to: try Request(method: method, target: target, headers: headers))
    }

    @Test func aGroupsMiddlewareRunsForItsRoutesAlone() async throws {
        let open = try await Self.send("/open", pass: false)
        #expect(open.status == .ok && open.headers[HTTPField.Name("X-Seen")!] == nil)
        let refused = try await Self.send("/page", pass: false)
        #expect(refused.status == .forbidden)
        #expect(String(decoding: refused.body, as: UTF8.self) == "page: no pass")
        let page = try await Self.send("/page")
        #expect(page.status == .ok && page.headers[HTTPField.Name("X-Seen")!] == "pages")
    }

    @Test func aGroupsPatternsAreUnderItsPrefixAndGroupsNestWithTheirMiddlewareInOrder() async throws {
        let item = try await Self.send("/api/items/7")
        #expect(String(decoding: item.body, as: UTF8.self) == "item 7")
        let ping = try await Self.send("/api/v2/ping")
        #expect(String(decoding: ping.body, as: UTF8.self) == "pong")
        // Finished innermost first.
        #expect(ping.headers[HTTPField.Name("X-Seen")!] == "v2api")
        #expect(try await Self.send("/items/7").status == .notFound)
    }

    @Test func aGroupsRendererRendersItsErrorsAndTheRoutingErrorsUnderItsPrefix() async throws {
        let refused = try await Self.send("/api/items/7", pass: false)
        #expect(refused.status == .forbidden && refused.headers[.contentType]?.hasPrefix("application/json") == true)
        #expect(refused.headers[HTTPField.Name("X-Seen")!] == "api")
        let broken = try await Self.send("/api/broken")
        #expect(broken.status == .conflict && broken.headers[.contentType]?.hasPrefix("application/json") == true)
        let missing = try await Self.send("/api/nothing/here")
        #expect(missing.status == .notFound && missing.headers[.contentType]?.hasPrefix("application/json") == true)
        let wrongMethod = try await Self.send("/api/items/7", method: .post)
        #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.headers[.allow] == "GET, HEAD")
        #expect(wrongMethod.headers[.contentType]?.hasPrefix("application/json") == true)
        // Outside the prefix, the router's renderer.
        let elsewhere = try await Self.send("/nothing")
        #expect(elsewhere.status == .notFound)
        #expect(String(decoding: elsewhere.body, as: UTF8.self).hasPrefix("page: "))
    }
}
