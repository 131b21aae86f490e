import FaultProxy
import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@testable import SyncClient

/// The client never sends its key, token or data to another origin: redirects there are refused
/// with an error naming the target; same-origin redirects are followed for reads only.
@Suite struct RedirectTests {
    /// A proxy in front of `target` that answers every table request with `status` and a
    /// `Location` made by `location`, and forwards what is under `/moved/` to `target`.
    static func redirector(
        status: Int, target: String, location: @escaping @Sendable (ProxiedRequest) -> String
    ) async throws -> FaultProxy {
        let proxy = try await FaultProxy(upstream: target)
        proxy.intercept { request, upstream in
            guard request.path.hasPrefix("/moved/") else {
                return .answer(ProxiedResponse(status: status, headers: ["Location": location(request)]))
            }
            var inner = request
            inner.target = String(request.target.dropFirst("/moved".count))
            return .answer(try await upstream.forward(inner))
        }
        return proxy
    }

    @Test(arguments: TableProtocol.allCases)
    func redirectToAnotherPortSendsNeitherKeyNorTokenNorBody(spoken: TableProtocol) async throws {
        let folder = try TemporaryFolder()
        // Another loopback service, which records every request it receives and answers 201.
        let recorder = try await MisbehavingService { _ in .json(201, #"{"id":"a","version":"AA==","text":"stolen"}"#) }
        let elsewhere = "http://127.0.0.1:\(recorder.port)"
        let redirector = try await Self.redirector(status: 307, target: elsewhere) { request in
            elsewhere + request.path
        }
        let context = try SyncContext(
            path: folder.file("store.sqlite"),
            configuration: .init(
                remoteURL: URL(string: redirector.url)!, applicationKey: "app-secret", authToken: "user-token",
                tableProtocol: spoken == .v3 ? .v3 : .v2))
        try await context.table("todoitem").insert(["id": "a", "text": "private"])

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
        await redirector.stop()
    }

    @Test func sameOriginRedirectIsFollowedForReadsOnly() async throws {
        let folder = try TemporaryFolder()
        let service = try await TestService.forSync(in: folder)
        _ = try await service.rest.send(.post, "/tables/todoitem", body: ["id": "s", "text": "on the server"])
        let redirector = try await Self.redirector(status: 307, target: service.url) { request in
            "/moved" + request.target
        }
        let context = try SyncContext(
            path: folder.file("store.sqlite"), configuration: .init(remoteURL: URL(string: redirector.url)!))
        let pulled = try await context.table("todoitem").pull(queryId: nil)
        #expect(pulled.received == 1)

        try await context.table("todoitem").insert(["id": "b", "text": "local"])
        await #expect(throws: SyncError.stopped(.redirectRefused(to: redirector.url + "/moved/tables/todoitem"))) {
            try await context.push()
        }
        #expect(try await service.rest.get("todoitem", "b") == nil)
        await redirector.stop()
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
