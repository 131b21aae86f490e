import Foundation
import HTTPTypes

/// Removes secrets from what the flight recorder keeps, before anything is stored: the values of
/// the headers that carry credentials, the application key and sign-in token wherever they appear,
/// and any value that looks like a JSON Web Token (`eyJ…` in three dot-separated base64url parts).
struct Redaction: Sendable {
    /// What a secret is replaced with.
    static let mark = "[redacted]"
    /// Headers whose value is always a secret.
    static let secretHeaders: Set<String> = [
        "x-zumo-application", "x-zumo-auth", "authorization", "cookie", "set-cookie",
    ]

    /// The secrets this client sends (the application key, the sign-in token).
    let secrets: [String]

    init(secrets: [String?]) {
        // The longest first, so that a secret containing another is replaced whole.
        self.secrets = secrets.compactMap { $0 }.filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }

    /// `fields` as `Name: value` lines, with the values of secret headers replaced.
    func headers(_ fields: HTTPFields) -> String {
        fields.map { field in
            let value = Self.secretHeaders.contains(field.name.canonicalName) ? Self.mark : text(field.value)
            return field.name.rawName + ": " + value
        }.joined(separator: "\n")
    }

    /// `text` with every known secret and JWT-looking value replaced.
    func text(_ text: String) -> String {
        var text = text
        for secret in secrets where text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: Self.mark)
        }
        guard text.contains("eyJ") else { return text }
        return text.replacing(Self.webToken, with: Self.mark)
    }

    /// How far past the cut redaction reads, so that a token across it is still recognised whole.
    static let lookAhead = 4096

    /// A body, redacted and cut at `limit` bytes (on a character boundary); nil when empty. `data`
    /// may be only the first bytes of a body of `whole` bytes (nil: `data` is all of it).
    func body(_ data: Data?, whole: Int? = nil, limit: Int) -> String? {
        guard let data, !data.isEmpty else { return nil }
        let size = whole ?? data.count
        let clean = text(String(decoding: data.prefix(limit + Self.lookAhead), as: UTF8.self))
        guard clean.utf8.count > limit || size > limit + Self.lookAhead else { return clean }
        var cut = ""
        var bytes = 0
        for character in clean {
            bytes += character.utf8.count
            guard bytes <= limit else { break }
            cut.append(character)
        }
        return cut + "\n[cut: \(size) bytes in all]"
    }

    /// A JSON Web Token: a base64url JSON header (`eyJ`), a payload and a (possibly empty) signature.
    nonisolated(unsafe) private static let webToken = /eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]*)?/
}
