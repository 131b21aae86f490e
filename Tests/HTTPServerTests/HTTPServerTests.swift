import Foundation
import HTTPTypes
import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

@Suite struct HTTPServerTests {
    /// Echoes method, body size and a digest of the body.
    static func echo(_ router: inout Router) {
        for method in [HTTPRequest.Method.get, .post, .patch, .delete, .put] {
            router.on(
                method, "/echo",
                .sync { request in
                    let sum = request.body.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) }
                    return .text("\(request.method) \(request.body.count) \(sum)")
                })
        }
    }

    @Test(arguments: ["GET", "POST", "PATCH", "DELETE"], [0, 1, 1 << 20])
    func bodiesOfEverySizeUpToTheLimitArrive(method: String, size: Int) async throws {
        let server = try TestHTTPServer(Self.echo)
        let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let sum = body.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) }
        // Raw bytes, because async-http-client refuses to send a GET with a body.
        let head = "\(method) /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(size)\r\n\r\n"
        let answer = try await RawHTTP.send(port: server.server.port, Data(head.utf8) + body)
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(answer.hasSuffix("\r\n\r\n\(method) \(size) \(sum)"))
    }

    @Test func bodyOverTheLimitIsAnswered413WithAMessage() async throws {
        let server = try TestHTTPServer(Self.echo, maxBodySize: 1000)
        let answer = try await server.send(.post, "/echo", body: Data(count: 1001))
        #expect(answer.status == 413)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("limit of 1000 bytes"))
        let fits = try await server.send(.post, "/echo", body: Data(count: 1000))
        #expect(fits.status == 200)
        // Far over the limit: answered at once, before the body is read.
        let huge = try await RawHTTP.send(
            port: server.server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
        #expect(huge.hasPrefix("HTTP/1.1 413"))
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllow() async throws {
        let server = try TestHTTPServer { router in
            router.get("/items/:id") { request in .text(request.parameters["id"] ?? "") }
            router.post("/items/:id") { _ in .text("posted") }
        }
        let missing = try await server.send(.get, "/nothing/here")
        #expect(missing.status == 404)
        let wrong = try await server.send(.delete, "/items/7")
        #expect(wrong.status == 405)
        #expect(wrong.headers["allow"] == "GET, POST, HEAD")
        let found = try await server.send(.get, "/items/a%20b")
        #expect(String(decoding: found.body, as: UTF8.self) == "a b")
    }

    @Test func headIsAnsweredLikeGetWithoutBody() async throws {
        let server = try TestHTTPServer { router in router.get("/page") { _ in .html("<p>hello</p>") } }
        let answer = try await server.send(.head, "/page")
        #expect(answer.status == 200)
        #expect(answer.body.isEmpty)
        #expect(answer.headers["content-length"] == "12")
    }

    @Test func queryAndFormDecodeUTF8PlusAndPercentEscapes() async throws {
        let server = try TestHTTPServer { router in
            router.get("/q") { request in
                .text(request.queryItems.map { "\($0.name)=\($0.value)" }.joined(separator: "|"))
            }
            router.post("/form") { request in
                .text(try request.form().pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "|"))
            }
        }
        let query = try await server.send(.get, "/q?text=caf%C3%A9+au+lait&sign=%2B1&empty=&%24top=5")
        #expect(String(decoding: query.body, as: UTF8.self) == "text=café au lait|sign=+1|empty=|$top=5")
        let form = try await server.send(
            .post, "/form", body: Data("text=na%C3%AFve+%26+%3D&x=%E2%9C%93".utf8),
            headers: [.contentType: "application/x-www-form-urlencoded"])
        #expect(String(decoding: form.body, as: UTF8.self) == "text=naïve & =|x=✓")
        let broken = try await server.send(.post, "/form", body: Data("text=%FF%FE".utf8))
        #expect(broken.status == 400)
        let brokenQuery = try await server.send(.get, "/q?x=%C3")
        #expect(brokenQuery.status == 400)
    }

    @Test func twoHundredConcurrentKeepAliveRequestsAreAllAnswered() async throws {
        let server = try TestHTTPServer { router in
            router.get("/n/:n") { request in .text(request.parameters["n"]!) }
        }
        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<200 {
                group.addTask {
                    let answer = try await server.send(.get, "/n/\(n)")
                    return answer.status == 200 && String(decoding: answer.body, as: UTF8.self) == "\(n)"
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers.count == 200)
        #expect(answers.allSatisfy { $0 })
    }

    struct Broken: Error {}

    @Test func throwingHandlerGives500PageAndTheNextRequestStillWorks() async throws {
        let server = try TestHTTPServer { router in
            router.get("/boom") { _ in throw Broken() }
            router.get("/fine") { _ in .text("fine") }
        }
        let boom = try await server.send(.get, "/boom")
        #expect(boom.status == 500)
        #expect(boom.headers["content-type"]?.hasPrefix("text/html") == true)
        let json = try await server.send(.get, "/boom", headers: [.accept: "application/json"])
        #expect(json.status == 500)
        #expect(try JSONSerialization.jsonObject(with: json.body) is [String: Any])
        let fine = try await server.send(.get, "/fine")
        #expect(fine.status == 200)
    }

    @Test func asyncHandlersAnswerWithoutBlockingOthers() async throws {
        let arrived = TestEvent()
        let released = TestEvent()
        let server = try TestHTTPServer { router in
            router.get("/slow") { _ async throws in
                arrived.signal()
                await released.wait()
                return .text("slow")
            }
            router.get("/fast") { _ in .text("fast") }
            router.get("/fails") { _ async throws -> Response in throw HTTPError(.conflict, "taken") }
        }
        async let slow = server.send(.get, "/slow")
        await arrived.wait()
        // Answered while the slow handler still waits.
        let fast = try await server.send(.get, "/fast")
        #expect(fast.status == 200)
        released.signal()
        #expect(try await String(decoding: slow.body, as: UTF8.self) == "slow")
        let fails = try await server.send(.get, "/fails")
        #expect(fails.status == 409)
    }

    @Test func responseHeadersAreWrittenWithASpaceAfterTheColon() async throws {
        let server = try TestHTTPServer { router in
            router.get("/h") { _ in
                Response(status: .ok, headers: [HTTPField.Name("X-Custom")!: "value"], body: Data("ok".utf8))
            }
        }
        let raw = try await RawHTTP.send(
            port: server.server.port, "GET /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(raw.contains("X-Custom: value\r\n"))
        #expect(!raw.contains("X-Custom:value"))
    }

    @Test func malformedRequestsNeitherCrashNorStallTheServer() async throws {
        let server = try TestHTTPServer { router in router.get("/ok") { _ in .text("ok") } }
        for junk in [
            "GARBAGE\r\n\r\n", "GET /ok HTTP/9.9\r\n\r\n", "GET /%ZZ HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", "\u{0}\u{1}\u{2}\r\n\r\n",
        ] {
            _ = try? await RawHTTP.send(port: server.server.port, junk, deadline: .seconds(1))
        }
        let ok = try await server.send(.get, "/ok")
        #expect(ok.status == 200)
    }

    @Test func stopIsCleanAndPortIsReadBack() async throws {
        let server = try TestHTTPServer { router in router.get("/ok") { _ in .text("ok") } }
        #expect(server.server.port > 0)
        await server.server.stop()
        await server.server.stop()
        // Refused, or (the port was free again and a server of another test running beside this one
        // took it) answered by that server: never by this one.
        let answer = try? await RawHTTP.send(port: server.server.port, "GET /ok HTTP/1.1\r\n\r\n")
        #expect(
            answer.map { !($0.hasPrefix("HTTP/1.1 200") && $0.hasSuffix("ok")) } ?? true, "the stopped server answered")
    }

    @Test func stopWaitsForARunningAsyncHandlerAndItsAnswer() async throws {
        let (started, finish) = (TestEvent(), TestEvent())
        let server = try TestHTTPServer { router in
            router.get("/slow") { _ async throws in
                started.signal()
                // The handler's work, which the stop must let finish: it ends once the stop has begun.
                await finish.wait()
                return .text("done")
            }
        }
        async let answer = server.send(.get, "/slow")
        await started.wait()
        let stopping = Task { await server.server.stop() }
        try await eventually("the stop began") { server.server.isStopping }
        finish.signal()
        #expect(try await String(decoding: answer.body, as: UTF8.self) == "done")
        await stopping.value
    }

    /// More stops at once than the cooperative pool has threads: a stop that blocked its thread
    /// while waiting would leave none for the handlers it waits for (and, after the grace,
    /// stopping with a parked connection aborts the process).
    @Test func asyncStopsWaitForParkedHandlersWithoutHoldingThreads() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let started = Atomic<Int>(0)
        let (allStarted, finish) = (TestEvent(), TestEvent())
        var servers: [TestHTTPServer] = []
        for _ in 0..<count {
            servers.append(
                try TestHTTPServer { router in
                    router.get("/slow") { _ async throws in
                        if started.add(1, ordering: .relaxed).newValue == count { allStarted.signal() }
                        // The handler's work, which the stops must let finish: it ends once every stop has begun.
                        await finish.wait()
                        return .text("done")
                    }
                })
        }
        let answers = Task { [servers] in
            try await withThrowingTaskGroup(of: String.self) { group in
                for server in servers {
                    group.addTask { String(decoding: try await server.send(.get, "/slow").body, as: UTF8.self) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        await allStarted.wait()
        let stops = Task { [servers] in
            await withTaskGroup(of: Void.self) { group in
                for server in servers { group.addTask { await server.server.stop(grace: .seconds(60)) } }
            }
        }
        try await eventually("every stop began") { servers.allSatisfy(\.server.isStopping) }
        finish.signal()
        await stops.value
        #expect(try await answers.value == Array(repeating: "done", count: count))
    }

    @Test func badHostIsATypedError() {
        #expect(throws: HTTPServerError.invalidHost("not a host")) {
            _ = try HTTPServer(configuration: .init(host: "not a host"), responder: Router().buildResponder())
        }
    }
}
