import Foundation
import HTTPServer
import HTTPTypes
import Synchronization

/// A message shown once on the next page a browser sees ("Saved locally — 3 changes pending").
struct Flash: Sendable, Equatable, Encodable {
    enum Kind: String, Sendable, Encodable { case success, info, warning, error }
    var kind: Kind
    var message: String
}

/// Gives each browser a random session id (an HttpOnly cookie) and keeps its pending flash
/// messages, so that a message survives the redirect after a form POST.
final class Sessions: Middleware, Sendable {
    static let cookieName = "todosync_session"
    static let attribute = "session"
    /// Browsers whose unread messages are kept.
    static let maximumSessions = 1000
    private let flashes = Mutex<[String: [Flash]]>([:])

    func intercept(_ request: inout Request) throws -> Response? {
        if let id = request.cookies[Self.cookieName], id.count == 32, id.allSatisfy(\.isHexDigit) {
            request.attributes[Self.attribute] = id
        } else {
            request.attributes[Self.attribute] = CSRFProtection.randomToken().prefix(32).description
            request.attributes["newSession"] = "1"
        }
        return nil
    }

    func finish(_ request: Request, _ response: inout Response) {
        if request.attributes["newSession"] != nil, let id = request.attributes[Self.attribute] {
            response.headers.append(
                HTTPField(name: .setCookie, value: "\(Self.cookieName)=\(id); Path=/; HttpOnly; SameSite=Lax"))
        }
    }

    /// Queues a message for the browser that sent `request`.
    func flash(_ request: Request, _ kind: Flash.Kind, _ message: String) {
        guard let id = request.attributes[Self.attribute] else { return }
        flash(session: id, Flash(kind: kind, message: message))
    }

    func flash(session id: String, _ flash: Flash) {
        flashes.withLock { all in
            // Scripts that keep no cookies start a session per request: keep the store bounded.
            if all[id] == nil, all.count >= Self.maximumSessions, let any = all.keys.first { all[any] = nil }
            var list = all[id] ?? []
            list.append(flash)
            all[id] = Array(list.suffix(5))
        }
    }

    /// The browser's messages, removed from the store.
    func takeFlashes(_ request: Request) -> [Flash] {
        guard let id = request.attributes[Self.attribute] else { return [] }
        return flashes.withLock { $0.removeValue(forKey: id) ?? [] }
    }
}
