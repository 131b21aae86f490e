import Foundation

/// `--access-token-file FILE`: tokens that sign in as often as needed, one a line, each optionally
/// preceded by its role (`viewer 3f9a…` or `operator 3f9a…`; a bare token is an operator's). Blank
/// lines and lines starting with `#` are skipped.
public enum AccessTokenFile {
    /// Shorter tokens are refused: they could be guessed.
    public static let minimumLength = 16

    /// Why a token file is refused.
    public struct Refusal: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// The tokens in the file at `path`, with their roles.
    public static func read(_ path: String) throws(Refusal) -> [String: AccessRole] {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw Refusal(description: "--access-token-file '\(path)' cannot be read; give the path of a text file.")
        }
        return try parse(text, path: path)
    }

    static func parse(_ text: String, path: String) throws(Refusal) -> [String: AccessRole] {
        var tokens: [String: AccessRole] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            let role = words.count == 2 ? AccessRole(rawValue: first) : .operator
            let token = words.count == 2 ? words[1] : first
            guard words.count <= 2, let role else {
                throw Refusal(
                    description: "--access-token-file '\(path)', line \(index + 1): write a token, or "
                        + "'viewer TOKEN' or 'operator TOKEN'.")
            }
            guard token.count >= minimumLength, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw Refusal(
                    description: "--access-token-file '\(path)', line \(index + 1): a token needs at least "
                        + "\(minimumLength) characters without spaces (e.g. openssl rand -hex 32).")
            }
            tokens[token] = role
        }
        guard !tokens.isEmpty else {
            throw Refusal(description: "--access-token-file '\(path)' holds no token.")
        }
        return tokens
    }
}
