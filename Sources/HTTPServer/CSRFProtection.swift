import Foundation
import HTTPTypes

/// Requires a secret token on every state-changing request (anything but GET, HEAD, OPTIONS).
///
/// Pages embed the token in a hidden `_csrf` field of each form; scripts send it as the
/// `X-CSRF-Token` header. A page on another site cannot read the token, so it cannot forge
/// a request. Use it in the route group of the pages and scripts that carry the token (see
/// ``Router/group(_:_:)``): routes outside it (a protocol API with its own key) are not checked.
public struct CSRFProtection: Middleware {
    /// The form field that carries the token.
    public static let fieldName = "_csrf"
    /// The header that carries the token.
    public static let headerName = HTTPField.Name("X-CSRF-Token")!

    public let token: String

    /// - Parameter token: the secret; a random one per process when omitted.
    public init(token: String = CSRFProtection.randomToken()) {
        self.token = token
    }

    /// 32 random bytes as hex.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(64)
        for _ in 0..<32 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            hex += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
        }
        return String(decoding: hex, as: UTF8.self)
    }

    public func intercept(_ request: inout Request) throws -> Response? {
        guard ![HTTPRequest.Method.get, .head, .options].contains(request.method) else { return nil }
        let sent = request.headers[Self.headerName] ?? (try? request.form())?[Self.fieldName] ?? ""
        guard Self.constantTimeEquals(sent, token) else {
            throw HTTPError(
                .forbidden, "This form has expired or did not come from this dashboard. Reload the page and try again.")
        }
        return nil
    }

    /// Compares without returning early, so the time taken says nothing about the secret.
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
