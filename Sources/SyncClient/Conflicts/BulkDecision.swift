/// What a bulk decision (or its undo) did.
public struct BulkDecision: Sendable, Hashable {
    /// The batch id its journal entries carry.
    public var batch: String
    /// The outcome per conflicted operation.
    public var outcomes: [Int64: OperationOutcome]
    /// For an undo: the outcome per overturned journal entry.
    public var overturned: [String: OperationOutcome] = [:]
}

/// What a bulk decision would do, before it is applied.
public struct BulkPreview: Sendable, Hashable {
    /// Use Client or Use Server.
    public var resolution: ConflictResolution
    /// One per conflict still open.
    public var conflicts: [Conflict]

    /// One conflict of the preview.
    public struct Conflict: Sendable, Hashable {
        /// The conflicted operation.
        public var operationId: Int64
        /// The item's id.
        public var itemId: String
        /// The todo's text, when it has one.
        public var title: String?
        /// The fields that take another value.
        public var fields: [String]
        /// Whether the decision deletes the item (here or on the service).
        public var deletes: Bool
    }

    /// How many conflicts change each field, by field name.
    public var fieldCounts: [String: Int] {
        conflicts.reduce(into: [:]) { counts, conflict in
            for field in conflict.fields { counts[field, default: 0] += 1 }
        }
    }
}
