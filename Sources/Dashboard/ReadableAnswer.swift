import Foundation

/// A service's answer as a person reads it: an HTML error page reduced to its text, whitespace
/// collapsed, cut to a sane length, and folded behind its first words when long.
struct ReadableAnswer: Encodable, Sendable, Hashable {
    /// The longest text kept.
    static let maximumLength = 600
    /// Longer answers fold into a details element showing this many characters.
    static let summaryLength = 80

    /// The whole (cut) text.
    var text: String
    /// Its first words, when folded.
    var summary: String
    /// Whether the text is long enough to fold.
    var folded: Bool

    init(_ raw: String) {
        var text = Self.plainText(raw)
        if text.count > Self.maximumLength { text = String(text.prefix(Self.maximumLength - 1)) + "…" }
        self.text = text
        folded = text.count > Self.summaryLength
        summary = folded ? Self.cut(text, at: Self.summaryLength) : text
    }

    /// `text` cut at the last space before `length` characters, with an ellipsis.
    static func cut(_ text: String, at length: Int) -> String {
        let head = text.prefix(length)
        let end = head.lastIndex(of: " ") ?? head.endIndex
        return String(head[..<end]) + "…"
    }

    /// The text of `raw`: unchanged when it is not markup; otherwise without scripts, styles and
    /// tags, with entities decoded and whitespace collapsed.
    static func plainText(_ raw: String) -> String {
        var text = raw
        if raw.range(
            of: #"<\s*(html|body|head|title|p|div|h[1-6]|pre|br|!doctype)\b"#,
            options: [.regularExpression, .caseInsensitive]) != nil
        {
            for block in ["script", "style", "head"] {
                text = text.replacingOccurrences(
                    of: "<\(block)\\b[^>]*>[\\s\\S]*?</\(block)\\s*>", with: " ",
                    options: [.regularExpression, .caseInsensitive])
            }
            text = text.replacingOccurrences(of: "<!--[\\s\\S]*?-->", with: " ", options: .regularExpression)
            text = text.replacingOccurrences(of: "<[^>]*>", with: " ", options: .regularExpression)
            text = decodeEntities(text)
        }
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    private static let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " "]

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(10).firstIndex(of: ";") {
                let name = String(after[..<semicolon])
                var decoded: String?
                if let value = named[name.lowercased()] {
                    decoded = value
                } else if name.hasPrefix("#x") || name.hasPrefix("#X"), let code = UInt32(name.dropFirst(2), radix: 16)
                {
                    decoded = Unicode.Scalar(code).map { String(Character($0)) }
                } else if name.hasPrefix("#"), let code = UInt32(name.dropFirst()) {
                    decoded = Unicode.Scalar(code).map { String(Character($0)) }
                }
                if let decoded {
                    result += decoded
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            result += "&"
            rest = after
        }
        return result + rest
    }
}
