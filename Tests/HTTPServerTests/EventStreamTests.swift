import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol
import Synchronization
import TestSupport
import Testing

@Suite struct EventStreamTests {
    @Test func eventsAreWrittenAsTheyAreSentAndTheStreamEndsWithItsProducer() async throws {
        let firstRead = TestEvent()
        let server = try TestHTTPServer { router in
            router.get("/events") { _ in
                .eventStream { stream in
                    stream.send(ServerSentEvent(id: "1", event: "change", data: "first"))
                    await firstRead.wait()
                    stream.send(ServerSentEvent(id: "2", data: "two\nlines"))
                }
            }
        }
        let stream = try await server.events("/events")
        #expect(stream.status == 200)
        #expect(stream.headers.first(name: "content-type") == "text/event-stream; charset=utf-8")
        #expect(try await stream.next() == ReceivedEvent(id: "1", event: "change", data: "first"))
        firstRead.signal()
        #expect(try await stream.next() == ReceivedEvent(id: "2", data: "two\nlines"))
        #expect(try await stream.next() == nil)
        await server.server.stop()
    }

    /// Waiting streams are parked connections: more of them than the server has threads, and
    /// other requests are still answered.
    @Test func waitingStreamsHoldNoThread() async throws {
        let release = TestEvent()
        let server = try TestHTTPServer { router in
            router.get("/events") { _ in
                .eventStream { stream in
                    stream.send(ServerSentEvent(data: "open"))
                    await release.wait()
                }
            }
            router.get("/fast") { _ in .text("fast") }
        }
        var streams: [TestEventStream] = []
        for _ in 0..<24 {
            let stream = try await server.events("/events")
            #expect(try await stream.next()?.data == "open")
            streams.append(stream)
        }
        #expect(server.server.openEventStreams == 24)
        #expect(try await server.send(.get, "/fast").status == 200)
        release.signal()
        for stream in streams { #expect(try await stream.next() == nil) }
        await server.server.stop()
    }

    @Test func stopFinishesEveryStreamWithAHintToReconnect() async throws {
        let closed = TestEvent()
        let server = try TestHTTPServer { router in
            router.get("/events") { _ in
                .eventStream { stream in
                    stream.send(ServerSentEvent(data: "open"))
                    await stream.closed()
                    closed.signal()
                }
            }
        }
        let stream = try await server.events("/events")
        #expect(try await stream.next()?.data == "open")
        await server.server.stop(grace: .seconds(30))
        #expect(try await stream.next() == nil)
        #expect(stream.retryMilliseconds == 2000)
        await closed.wait()
    }

    /// The heartbeat reaches a parked stream; a reader that went away is noticed at a heartbeat's
    /// write, and its producer sees the stream closed.
    @Test func aReaderThatGoesAwayClosesTheStream() async throws {
        let closed = TestEvent()
        let server = try TestHTTPServer(
            { router in
                router.get("/events") { _ in
                    .eventStream { stream in
                        stream.send(ServerSentEvent(data: "open"))
                        await stream.closed()
                        closed.signal()
                    }
                }
            }, heartbeatInterval: .milliseconds(50))
        let opened = TestEvent()
        let reader = Task {
            let stream = try await server.events("/events")
            #expect(try await stream.next()?.data == "open")
            opened.signal()
            _ = try await stream.next()
        }
        await opened.wait()
        // Cancelling the read closes the connection.
        reader.cancel()
        await closed.wait()
        #expect(server.server.openEventStreams == 0)
        await server.server.stop()
    }

    @Test func aReaderThatFallsTooFarBehindIsDropped() async throws {
        let refused = TestEvent()
        let server = try TestHTTPServer { router in
            router.get("/events") { _ in
                .eventStream(bufferLimit: 64 << 10) { stream in
                    let chunk = String(repeating: "x", count: 16 << 10)
                    // Loopback socket buffers take a few megabytes before the queue grows.
                    for _ in 0..<20_000 where !stream.send(ServerSentEvent(data: chunk)) {
                        refused.signal()
                        return
                    }
                }
            }
        }
        // Opened, never read.
        let stream = try await server.events("/events")
        #expect(stream.status == 200)
        await refused.wait()
        await server.server.stop()
    }
}
