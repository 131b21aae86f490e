import Mustache

/// HTML escaping for templates, byte-wise: swift-mustache's own escaper looks up every
/// `Character` in a dictionary, which made a 50-row page take 0.7 ms to render.
///
/// ``TemplateLibrary`` registers it as the `HTML` content type, and our templates start with
/// `{{% CONTENT_TYPE: HTML}}` to use it. A template without that line is still escaped, by
/// the library's slower default.
struct FastHTMLContentType: MustacheContentType {
    func escapeText(_ text: String) -> String {
        HTMLEscaping.escape(text)
    }
}

/// Escapes `& < > " '` for HTML text and attribute values.
public enum HTMLEscaping {
    public static func escape(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: needsEscape) else { return text }
        var output = [UInt8]()
        output.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "&"): output += "&amp;".utf8
            case UInt8(ascii: "<"): output += "&lt;".utf8
            case UInt8(ascii: ">"): output += "&gt;".utf8
            case UInt8(ascii: "\""): output += "&quot;".utf8
            case UInt8(ascii: "'"): output += "&#39;".utf8
            default: output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }
}
