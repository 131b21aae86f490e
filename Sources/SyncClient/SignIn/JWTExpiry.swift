import Foundation

/// Reads a JSON Web Token's `exp` without checking its signature (the service checks that): enough
/// to fetch a new token before the service starts refusing this one.
enum JWTExpiry {
    /// Whether `token` has a JWT's shape: three base64url parts, the first two JSON objects.
    static func isJWT(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && object(parts[0]) != nil && object(parts[1]) != nil
    }

    /// When the token expires; nil when it says nothing (or is not a JWT).
    static func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let exp = object(parts[1])?["exp"] as? Double else { return nil }
        return Date(timeIntervalSince1970: exp)
    }

    private static func object(_ part: Substring) -> [String: Any]? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
