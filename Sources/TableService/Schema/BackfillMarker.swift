/// What a backfill leaves in a row's hidden column `__backfilled`: the stamp it gave the row and
/// the version the row had before any backfill stamped it (`"<stamp> <version>"`). While the row's
/// `updatedAt` is still that stamp (no write since), a write expecting the earlier version is
/// accepted: an app that read the row before the schema changed, and knows nothing of the columns
/// the backfill set, does not conflict with it (its PUT keeps them, its former names are mapped).
struct BackfillMarker: Sendable, Equatable {
    /// The hidden column holding it (not in `__columns`, skipped when rows are read).
    static let column = "__backfilled"

    let stamp: Int64
    let versionBefore: String

    init(stamp: Int64, versionBefore: String) {
        self.stamp = stamp
        self.versionBefore = versionBefore
    }

    init?(_ text: String?) {
        guard let text, let space = text.firstIndex(of: " "), let stamp = Int64(text[..<space]) else { return nil }
        self.init(stamp: stamp, versionBefore: String(text[text.index(after: space)...]))
    }

    var text: String { "\(stamp) \(versionBefore)" }

    /// The version before the backfill, when the row is still as the backfill left it.
    func versionBefore(rowUpdatedAt: Int64) -> String? {
        rowUpdatedAt == stamp ? versionBefore : nil
    }

    /// The marker for a row stamped `stamp` now that held `version` at `updatedAt` with `previous`:
    /// a row another backfill stamped, and no one wrote since, keeps its first version.
    static func next(stamp: Int64, updatedAt: Int64, version: String, previous: String?) -> BackfillMarker {
        let before = BackfillMarker(previous)?.versionBefore(rowUpdatedAt: updatedAt) ?? version
        return BackfillMarker(stamp: stamp, versionBefore: before)
    }
}
