import Testing

@testable import SyncClient

/// The collapse rules as a table: the queued operation, its state, the new change, and the result.
@Suite struct CollapseDecisionTests {
    static let table: [(OperationKind, OperationState, OperationKind, Collapse)] = [
        (.insert, .pending, .update, .merge),
        (.insert, .attempted, .update, .merge),
        (.insert, .failed, .update, .merge),
        (.update, .pending, .update, .merge),
        (.update, .conflict, .update, .merge),
        (.insert, .pending, .delete, .drop),
        (.insert, .failed, .delete, .drop),
        (.insert, .attempted, .delete, .delete),
        (.update, .pending, .delete, .delete),
        (.update, .attempted, .delete, .delete),
        (.delete, .pending, .insert, .update),
        (.delete, .attempted, .insert, .update),
        (.insert, .pending, .insert, .refuse),
        (.update, .pending, .insert, .refuse),
        (.delete, .pending, .update, .refuse),
        (.delete, .pending, .delete, .refuse),
    ]

    @Test(arguments: 0..<table.count)
    func aChangeAfterAQueuedOperation(_ row: Int) {
        let (queued, state, change, expected) = Self.table[row]
        #expect(Collapse.decide(queued: queued, state: state, change: change) == expected)
    }
}
