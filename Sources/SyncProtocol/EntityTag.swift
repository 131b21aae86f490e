/// Versions travel as HTTP entity tags: `ETag: "MQ=="` on responses, `If-Match: "MQ=="` on writes.
public enum EntityTag {
    /// The `ETag`/`If-Match` value for a version: the version in double quotes.
    public static func header(for version: String) -> String {
        "\"" + version + "\""
    }

    /// The version named by an `ETag` or `If-Match` value, quoted or not.
    /// A weak tag (`W/"..."`) is not a version and gives `nil`, as does `*` or an empty value.
    public static func version(from header: String) -> String? {
        let trimmed = header.trimmingWhitespace()
        guard !trimmed.isEmpty, trimmed != "*", !trimmed.hasPrefix("W/") else { return nil }
        if trimmed.count >= 2, trimmed.hasPrefix("\""), trimmed.hasSuffix("\"") {
            return String(trimmed.dropFirst().dropLast())
        }
        return trimmed
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace { view.removeFirst() }
        while let last = view.last, last.isWhitespace { view.removeLast() }
        return String(view)
    }
}
