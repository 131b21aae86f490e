import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Testing

@testable import SyncClient

/// The client never sends its key, token or data to another origin: redirects there are refused
/// with an error naming the target; same-origin redirects are followed for reads only.
@Suite struct RedirectTests {
    /// A second loopback server that records every request it receives and answers 201.
    final class Recorder: Sendable {
        let server: HTTPServer
        private let received = Locked<[Request]>([])

        init() throws {
            var router = Router()
            let received = self.received
            for method in [HTTPRequest.Method.get, .post, .patch, .delete] {
                router.on(
                    method, "/*",
                    .sync { request in
                        received.withLock { $0.append(request) }
                        return .json(data: Data(#"{"id":"a","version":"AA==","text":"stolen"}"#.utf8), status: .created)
                    })
            }
            server = try HTTPServer(configuration: .init(port: 0), responder: router.buildResponder())
        }

        var requests: [Request] { received.withLock { $0 } }
        deinit { server.stop() }
    }

    /// A server that answers every table request with `status` and a `Location` made by `location`,
    /// except under `/moved/`, which it forwards to `target`.
    static func redirector(
        status: HTTPResponse.Status, target: String, location: @escaping @Sendable (Request) -> String
    ) throws
        -> HTTPServer
    {
        var router = Router()
        for method in [HTTPRequest.Method.get, .post, .patch, .delete] {
            router.on(
                method, "/tables/*",
                .sync { request in
                    var response = Response(status: status)
                    response.headers[.location] = location(request)
                    return response
                })
            router.on(
                method, "/moved/*",
                .sync { request in
                    let inner = Request(
                        method: request.method, path: request.path,
                        pathSegments: Array(request.pathSegments.dropFirst()),
                        queryItems: request.queryItems, headers: request.headers, body: request.body)
                    return try FaultProxy.forward(inner, to: target)
                })
        }
        return try HTTPServer(configuration: .init(port: 0, threadPoolSize: 4), responder: router.buildResponder())
    }

    @Test func redirectToAnotherPortSendsNeitherKeyNorTokenNorBody() async throws {
        let folder = try TemporaryFolder()
        let recorder = try Recorder()
        let elsewhere = recorder.server.url
        let redirector = try Self.redirector(status: .temporaryRedirect, target: elsewhere) { request in
            elsewhere + request.path
        }
        defer { redirector.stop() }
        let context = try SyncContext(
            path: folder.file("store.sqlite"),
            configuration: .init(
                remoteURL: URL(string: redirector.url)!, applicationKey: "app-secret", authToken: "user-token"))
        try context.table("todoitem").insert(["id": "a", "text": "private"])

        await #expect(throws: SyncError.stopped(.redirectRefused(to: elsewhere + "/tables/todoitem"))) {
            try await context.push()
        }
        await #expect(throws: SyncError.stopped(.redirectRefused(to: elsewhere + "/tables/todoitem"))) {
            try await context.table("todoitem").pull(queryId: nil)
        }
        #expect(recorder.requests.isEmpty, "the other port received \(recorder.requests.map(\.path))")
        #expect(try context.status().pending == 1)
        let message = SyncError.stopped(.redirectRefused(to: elsewhere + "/tables/todoitem")).description
        #expect(message.contains(elsewhere))
    }

    @Test func sameOriginRedirectIsFollowedForReadsOnly() async throws {
        let folder = try TemporaryFolder()
        let service = try LiveService(folder: folder)
        _ = try await service.rest.send(.post, "/tables/todoitem", body: ["id": "s", "text": "on the server"])
        let redirector = try Self.redirector(status: .temporaryRedirect, target: service.running.url) { request in
            let query = request.queryItems.map { HTTPTransport.encode($0.name) + "=" + HTTPTransport.encode($0.value) }
            return "/moved" + request.path + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        }
        defer { redirector.stop() }
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: URL(string: redirector.url)!))
        let pulled = try await context.table("todoitem").pull(queryId: nil)
        #expect(pulled.received == 1)

        try context.table("todoitem").insert(["id": "b", "text": "local"])
        await #expect(throws: SyncError.stopped(.redirectRefused(to: redirector.url + "/moved/tables/todoitem"))) {
            try await context.push()
        }
        #expect(try await service.rest.get("todoitem", "b") == nil)
    }

    @Test func policyDecidesByOriginAndMethod() throws {
        let service = URL(string: "http://127.0.0.1:8080")!
        let current = URL(string: "http://127.0.0.1:8080/tables/todoitem")!
        #expect(
            RedirectPolicy.decide(method: .get, current: current, location: "/other", service: service)
                == .follow(URL(string: "http://127.0.0.1:8080/other")!))
        #expect(
            RedirectPolicy.decide(method: .patch, current: current, location: "/other", service: service)
                == .refuse("http://127.0.0.1:8080/other"))
        for elsewhere in ["http://127.0.0.1:8081/x", "https://127.0.0.1:8080/x", "http://localhost:8080/x"] {
            #expect(
                RedirectPolicy.decide(method: .get, current: current, location: elsewhere, service: service)
                    == .refuse(elsewhere))
        }
        #expect(
            RedirectPolicy.decide(
                method: .get, current: URL(string: "http://example.org/t")!, location: "http://example.org:80/u",
                service: URL(string: "http://example.org")!) == .follow(URL(string: "http://example.org:80/u")!))
        #expect(
            RedirectPolicy.decide(method: .get, current: current, location: nil, service: service)
                == .refuse("(no Location header)"))
    }
}
