import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// What a failed exchange becomes: a typed ``SyncError`` that says what happened and what to do.
extension HTTPTransport {
    /// The readable, typed error for a failed exchange.
    func describe(_ error: any Error, url: String) -> SyncError {
        switch error {
        case let error as SyncError:
            return error
        case let error as HTTPClientError:
            switch error {
            case .connectTimeout, .writeTimeout:
                return .stopped(.unreachable("\(baseURL.absoluteString): the connection timed out"))
            case .cancelled:
                return .stopped(.cancelled)
            case .invalidURL, .emptyHost, .emptyScheme:
                return .stopped(.unreachable("the address \(url) is not valid"))
            case .remoteConnectionClosed:
                return .stopped(
                    .connectionLost("\(baseURL.absoluteString): the connection closed before the answer was complete"))
            default:
                return .stopped(.unreachable("\(baseURL.absoluteString): \(error)"))
            }
        case HTTPParserError.invalidEOFState:
            // The connection closed in the middle of the answer's bytes.
            return .stopped(
                .connectionLost("\(baseURL.absoluteString): the connection closed before the answer was complete"))
        case is ResponseAccumulator.ResponseTooBigError, is NIOTooManyBytesError:
            return .serviceFault(.answerTooLarge(limit: Self.maximumBody))
        case is CancellationError:
            return .stopped(.cancelled)
        case NIOSSLError.uncleanShutdown:
            return .stopped(
                .connectionLost("\(baseURL.absoluteString): the TLS connection closed before the answer was complete"))
        case let error as NIOSSLError where Self.droppedDuringHandshake(error):
            // A connection dropped while meeting: not the certificate's fault, and sent again.
            return .stopped(
                .connectionLost("\(baseURL.absoluteString): the connection closed during the TLS handshake"))
        case let error as NIOSSLError:
            return .stopped(.certificateRefused(host: baseURL.host ?? baseURL.absoluteString, detail: "\(error)"))
        case let error as NIOSSLExtraError:
            return .stopped(.certificateRefused(host: baseURL.host ?? baseURL.absoluteString, detail: "\(error)"))
        case let error as IOError where [ECONNRESET, EPIPE].contains(error.errnoCode):
            return .stopped(.connectionLost("\(baseURL.absoluteString): \(Self.describe(errno: error.errnoCode))"))
        case let error as IOError:
            return .stopped(.unreachable("\(baseURL.absoluteString): \(Self.describe(errno: error.errnoCode))"))
        default:
            return .stopped(.unreachable("\(baseURL.absoluteString): \(error)"))
        }
    }

    /// Whether the TLS handshake failed because the connection closed, not because of what it said.
    static func droppedDuringHandshake(_ error: NIOSSLError) -> Bool {
        switch error {
        case .handshakeFailed(.sslError(let errors)): errors.contains(.eofDuringHandshake)
        case .handshakeFailed(.syscallError), .handshakeFailed(.zeroReturn): true
        default: false
        }
    }

    /// "connection refused" rather than NIO's "connection reset (error set): Connection refused (errno: 111)".
    static func describe(errno code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "connection refused (is the service running?)"
        case ECONNRESET: "connection reset by the server"
        case EHOSTUNREACH, ENETUNREACH: "no route to the host"
        default: String(cString: strerror(code)).lowercased()
        }
    }
}
