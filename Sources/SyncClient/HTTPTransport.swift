import Foundation
import SyncProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

/// The HTTP side of the table protocol: one URLSession (keep-alive), the protocol headers, timeouts.
final class HTTPTransport: Sendable {
    let baseURL: URL
    let applicationKey: String?
    private let base: String
    private let session: URLSession

    init(baseURL: URL, applicationKey: String?, timeout: TimeInterval) {
        self.baseURL = baseURL
        self.applicationKey = applicationKey
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = max(timeout * 4, 60)
        configuration.httpMaximumConnectionsPerHost = 8
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

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
        guard let url = URL(string: text) else { throw .unreachable("the address \(text) is not valid") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue(ProtocolHeader.currentVersion, forHTTPHeaderField: ProtocolHeader.apiVersion)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let applicationKey, !applicationKey.isEmpty {
            request.setValue(applicationKey, forHTTPHeaderField: ProtocolHeader.applicationKey)
        }
        if let version { request.setValue(EntityTag.header(for: version), forHTTPHeaderField: "If-Match") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { throw StopReason.unreachable("not an HTTP answer") }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key] = value }
            }
            return HTTPReply(status: http.statusCode, headers: headers, body: data)
        } catch let reason as StopReason {
            throw reason
        } catch let error as URLError {
            switch error.code {
            case .timedOut: throw .timedOut
            case .cancelled: throw .cancelled
            default: throw .unreachable("\(baseURL.absoluteString): \(error.localizedDescription)")
            }
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .unreachable("\(baseURL.absoluteString): \(error.localizedDescription)")
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
