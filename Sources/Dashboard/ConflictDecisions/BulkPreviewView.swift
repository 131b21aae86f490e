import SyncClient

/// The `/conflicts/bulk` page's content: what a bulk Use Client or Use Server would change.
struct BulkPreviewView: Encodable, Sendable {
    var choice: String
    var choiceLabel: String
    /// "on the service" for Use Client, "here" for Use Server.
    var whereChanges: String
    var count: Int
    var plural: Bool
    var conflicts: [Conflict]
    var fieldCounts: [FieldCount]
    var deletes: Int
    var hasConflicts: Bool

    /// One conflict of the batch.
    struct Conflict: Encodable, Sendable {
        var id: Int64
        var title: String
        var fields: String
        var deletes: Bool
    }

    /// How many conflicts change one field.
    struct FieldCount: Encodable, Sendable {
        var name: String
        var count: Int
    }

    init(_ preview: BulkPreview) {
        choice = preview.resolution.rawValue
        choiceLabel = preview.resolution == .useClient ? "Use Client" : "Use Server"
        whereChanges = preview.resolution == .useClient ? "on the service" : "here"
        count = preview.conflicts.count
        plural = count != 1
        conflicts = preview.conflicts.map { conflict in
            Conflict(
                id: conflict.operationId, title: conflict.title ?? Display.shortId(conflict.itemId),
                fields: conflict.deletes ? "deleted" : conflict.fields.joined(separator: ", "),
                deletes: conflict.deletes)
        }
        fieldCounts = preview.fieldCounts.sorted { $0.key < $1.key }.map { FieldCount(name: $0.key, count: $0.value) }
        deletes = preview.conflicts.filter(\.deletes).count
        hasConflicts = !preview.conflicts.isEmpty
    }
}
