/// `--backup-keep`'s durations: a whole number and a unit, d, h, m or s (`7d`, `12h`, `30m`).
enum BackupKeep {
    static func parse(_ text: String) -> Duration? {
        guard let unit = text.last, let count = Int64(text.dropLast()), count > 0 else { return nil }
        switch unit {
        case "d": return .seconds(count * 86_400)
        case "h": return .seconds(count * 3600)
        case "m": return .seconds(count * 60)
        case "s": return .seconds(count)
        default: return nil
        }
    }
}
