import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncProtocol

/// One answer from the table service.
struct HTTPReply: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    /// The server's message: `{"error": "..."}`, or the body's text.
    var message: String {
        if let object = try? JSONDecoder().decode([String: JSONValue].self, from: body),
            let error = object["error"]?.stringValue ?? object["message"]?.stringValue
        {
            return error
        }
        return String(decoding: body.prefix(300), as: UTF8.self)
    }

    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// The HTTP side of the table protocol: a pool of keep-alive connections (async-http-client),
/// the protocol headers, and a deadline per request.
///
/// URLSession on Linux managed only ~1.8k sequential requests a second here and, after a
/// dropped keep-alive connection, re-sent a request without its body; async-http-client does
/// neither.
final class HTTPTransport: Sendable {
    let baseURL: URL
    let applicationKey: String?
    private let base: String
    private let timeout: TimeAmount
    /// One pool of keep-alive connections for the process (never shut down, like `HTTPClient.shared`).
    /// A connection that cannot be made fails the request at once, instead of retrying with a
    /// back-off: an offline client should say "unreachable" now, and try afresh on the next sync.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Largest answer read; a page of 1,000 rows is about 200 KB.
    private static let maximumBody = 64 << 20

    init(baseURL: URL, applicationKey: String?, timeout: TimeInterval) {
        self.baseURL = baseURL
        self.applicationKey = applicationKey
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.timeout = .milliseconds(Int64(max(0.001, timeout) * 1000))
    }

    /// `/tables/{table}` or `/tables/{table}/{id}`, each segment percent-encoded.
    func path(table: String, id: String? = nil) -> String {
        "/tables/" + Self.encode(table) + (id.map { "/" + Self.encode($0) } ?? "")
    }

    /// Sends one request; HTTP error statuses are answers, not errors. Only a failed exchange throws.
    func send(
        _ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil,
        ifMatch version: String? = nil
    ) async throws(StopReason) -> HTTPReply {
        var text = base + path
        if !query.isEmpty {
            text += "?" + query.map { Self.encode($0.0) + "=" + Self.encode($0.1) }.joined(separator: "&")
        }
        var request = HTTPClientRequest(url: text)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: ProtocolHeader.apiVersion, value: ProtocolHeader.currentVersion)
        request.headers.add(name: "Accept", value: "application/json")
        if let applicationKey, !applicationKey.isEmpty {
            request.headers.add(name: ProtocolHeader.applicationKey, value: applicationKey)
        }
        if let version { request.headers.add(name: "If-Match", value: EntityTag.header(for: version)) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let deadline = NIODeadline.now() + timeout
            let response = try await Self.client.execute(request, deadline: deadline)
            var bytes = try await response.body.collect(upTo: Self.maximumBody)
            var headers: [String: String] = [:]
            for (name, value) in response.headers { headers[name] = value }
            let data = Data(bytes.readBytes(length: bytes.readableBytes) ?? [])
            return HTTPReply(status: Int(response.status.code), headers: headers, body: data)
        } catch let error as HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                throw .timedOut
            case .cancelled:
                throw .cancelled
            case .invalidURL, .emptyHost, .emptyScheme:
                throw .unreachable("the address \(text) is not valid")
            case .remoteConnectionClosed:
                throw .unreachable("\(baseURL.absoluteString): the connection closed before the answer was complete")
            default:
                throw .unreachable("\(baseURL.absoluteString): \(error)")
            }
        } catch is CancellationError {
            throw .cancelled
        } catch let error as IOError {
            throw .unreachable("\(baseURL.absoluteString): \(Self.describe(errno: error.errnoCode))")
        } catch {
            throw .unreachable("\(baseURL.absoluteString): \(error)")
        }
    }

    /// "connection refused" rather than NIO's "connection reset (error set): Connection refused (errno: 111)".
    private static func describe(errno code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "connection refused (is the service running?)"
        case ECONNRESET: "connection reset by the server"
        case EHOSTUNREACH, ENETUNREACH: "no route to the host"
        default: String(cString: strerror(code)).lowercased()
        }
    }

    private static let unreserved: CharacterSet = {
        var set = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        set.insert(charactersIn: "$")
        return set
    }()

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
