/// A saved auth token as it may be shown: its length and last four characters, never the token.
///
/// A JWT's start is its header, the same for every token of a service; its last characters are
/// the signature's, enough for a user to tell two tokens apart and useless to an onlooker.
public struct AuthTokenHint: Sendable, Equatable, CustomStringConvertible {
    /// The token's length in characters.
    public let length: Int
    /// The last four characters (fewer for a shorter token, none for one of four or fewer).
    public let suffix: String

    /// The hint for `token`.
    public init(_ token: String) {
        length = token.count
        suffix = token.count > 8 ? String(token.suffix(4)) : ""
    }

    /// "set (…a1B2, 212 characters)".
    public var description: String {
        suffix.isEmpty ? "set (\(length) characters)" : "set (…\(suffix), \(length) characters)"
    }
}
