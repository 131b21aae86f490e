import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

@testable import SyncClient

/// The transport sends a request once more only when the failure proves that nothing went out.
@Suite struct TransportResendTests {
    @Test func aClosedPooledConnectionOrARefusedConnectionSentNothing() {
        #expect(HTTPTransport.sentNothing(ChannelError.ioOnClosedChannel))
        #expect(HTTPTransport.sentNothing(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
    }

    @Test func anythingThatMayHaveReachedTheServiceIsNotSentAgain() {
        #expect(!HTTPTransport.sentNothing(IOError(errnoCode: ECONNRESET, reason: "read")))
        #expect(!HTTPTransport.sentNothing(HTTPClientError.remoteConnectionClosed))
        #expect(!HTTPTransport.sentNothing(HTTPClientError.deadlineExceeded))
        #expect(!HTTPTransport.sentNothing(CancellationError()))
    }
}
