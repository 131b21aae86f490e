import Foundation

/// The time a restore goes back to (`--to`): an ISO 8601 instant, or the newest commit shipped.
public enum RestoreTime: Sendable, Equatable {
    case latest
    /// Milliseconds since 1970.
    case at(Int64)

    /// `latest`, or an ISO 8601 date and time with its offset (`2026-12-07T00:41:05Z`, fractions allowed).
    public init?(_ text: String) {
        if text.lowercased() == "latest" {
            self = .latest
            return
        }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) {
            self = .at(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
            return
        }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) else { return nil }
        self = .at(Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// `time` (ms since 1970) in ISO 8601, UTC, with milliseconds.
    public static func text(_ time: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000))
    }
}
