/// The protocol's timestamps: ISO-8601 UTC with milliseconds (`2026-11-21T23:02:54.020Z`),
/// handled as integer milliseconds since 1970 so that ordering and comparison are exact.
///
/// Formatting and parsing are done by hand (no `DateFormatter`): they run for every row of every page.
public enum ProtocolDate {
    /// `2026-11-21T23:02:54.020Z` for a number of milliseconds since 1970-01-01T00:00:00Z.
    public static func format(milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(milliseconds: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the formatted timestamp (without quotes) to a byte buffer.
    public static func append(milliseconds: Int64, to bytes: inout [UInt8]) {
        let dayMilliseconds: Int64 = 86_400_000
        var days = milliseconds / dayMilliseconds
        var rest = milliseconds % dayMilliseconds
        if rest < 0 {
            rest += dayMilliseconds
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) {
            bytes.append(UInt8(48 + value / 10 % 10))
            bytes.append(UInt8(48 + value % 10))
        }
        func digits(_ value: Int64, _ count: Int) {
            if count == 2 { return two(value) }
            if count == 3 {
                bytes.append(UInt8(48 + value / 100 % 10))
                return two(value % 100)
            }
            two(value / 100 % 100)
            two(value % 100)
        }
        digits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(rest / 3_600_000, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(rest / 60_000 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(rest / 1000 % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(rest % 1000, 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Milliseconds since 1970 for an ISO-8601 date-time: `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by
    /// `Z`, `±HH:MM` or nothing (UTC). Fractions beyond milliseconds are truncated. `nil` when malformed.
    public static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8(parse)
    }

    /// ``parse(_:)`` of a text's UTF-8 bytes (no copy, byte comparisons only: it runs for every
    /// date of every pulled row).
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var text = Scanner(bytes: bytes)
        guard let year = text.number(4), text.expect("-"), let month = text.number(2), text.expect("-"),
            let day = text.number(2), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        guard text.expect("T") || text.expect("t") || text.expect(" ") else { return nil }
        guard let hour = text.number(2), text.expect(":"), let minute = text.number(2), hour < 24, minute < 60
        else { return nil }
        var second: Int64 = 0
        var millisecond: Int64 = 0
        if text.expect(":") {
            guard let value = text.number(2), value < 60 else { return nil }
            second = value
            if text.expect(".") {
                var count = 0
                while let digit = text.digit() {
                    if count < 3 { millisecond = millisecond * 10 + digit }
                    count += 1
                }
                guard count > 0 else { return nil }
                if count < 3 { for _ in count..<3 { millisecond *= 10 } }
            }
        }
        var offsetMinutes: Int64 = 0
        if !text.isAtEnd, !text.expect("Z"), !text.expect("z") {
            let sign: Int64
            if text.expect("+") {
                sign = 1
            } else if text.expect("-") {
                sign = -1
            } else {
                return nil
            }
            guard let offsetHours = text.number(2), offsetHours < 24 else { return nil }
            _ = text.expect(":")
            guard let offsetMinute = text.number(2), offsetMinute < 60 else { return nil }
            offsetMinutes = sign * (offsetHours * 60 + offsetMinute)
        }
        guard text.isAtEnd else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        let local = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
        return local - offsetMinutes * 60_000
    }

    /// Reads a date's bytes from the start. A struct with mutating methods, not local functions
    /// capturing the position: those made the runtime check exclusive access at every digit (a
    /// third of a pulled page's decoding went to dates).
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        /// The digit at the position, read; nil (nothing read) when there is none.
        mutating func digit() -> Int64? {
            guard index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 else { return nil }
            index += 1
            return Int64(bytes[index - 1] - 48)
        }

        /// The number of the next `count` digits; nil when they are not all digits.
        mutating func number(_ count: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        /// Whether `character` is next (then read).
        mutating func expect(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Howard Hinnant's `days_from_civil`.
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Howard Hinnant's `civil_from_days`.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
