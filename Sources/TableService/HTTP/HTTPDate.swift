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
}
