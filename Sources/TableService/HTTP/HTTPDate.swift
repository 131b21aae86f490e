import SyncProtocol

/// The HTTP date of `Last-Modified` (RFC 9110's IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`).
enum HTTPDate {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date of a number of milliseconds since 1970 (to the second below).
    static func format(milliseconds: Int64) -> String {
        // 2026-11-21T23:02:54.020Z: the civil date and time by ProtocolDate, rearranged.
        let iso = Array(ProtocolDate.format(milliseconds: milliseconds).utf8)
        func text(_ range: Range<Int>) -> String { String(decoding: iso[range], as: UTF8.self) }
        var days = milliseconds / 86_400_000
        if milliseconds % 86_400_000 < 0 { days -= 1 }
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        let month = months[(Int(text(5..<7)) ?? 1) - 1]
        return "\(weekday), \(text(8..<10)) \(month) \(text(0..<4)) \(text(11..<19)) GMT"
    }

    /// Milliseconds since 1970 of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), `nil` when
    /// the text is not one (the obsolete formats are not read).
    static func parse(_ text: String) -> Int64? {
        let parts = text.trimmingWhitespace().split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT", parts[1].count == 2,
            let month = months.firstIndex(of: String(parts[2])), parts[3].count == 4, parts[4].count == 8
        else { return nil }
        let monthText = month < 9 ? "0\(month + 1)" : "\(month + 1)"
        return ProtocolDate.parse("\(parts[3])-\(monthText)-\(parts[1])T\(parts[4])Z")
    }
}
