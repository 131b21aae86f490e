import Foundation

/// What a revoked device sends the service before it stops (`POST /devices/{id}/escrow`): its
/// queued operations, which the service holds in escrow — not applied — until its admin applies or
/// discards each. A deposit is idempotent: an operation the service already holds (same device, same
/// ``Operation/operationID``) is counted as held again, never stored twice.
public struct EscrowDeposit: Sendable, Hashable, Codable {
    /// One queued change, as the device's queue holds it.
    public struct Operation: Sendable, Hashable, Codable {
        /// The operation's id in the device's queue: the service holds each once per device.
        public var operationID: Int64
        public var table: String
        /// `insert`, `update` or `delete`.
        public var operation: String
        public var itemID: String
        /// The item's values as the device would have sent them (with the version it last saw);
        /// nil for a delete.
        public var item: JSONValue?
        /// When the device queued it (ISO 8601).
        public var queuedAt: String

        public init(
            operationID: Int64, table: String, operation: String, itemID: String, item: JSONValue?, queuedAt: String
        ) {
            self.operationID = operationID
            self.table = table
            self.operation = operation
            self.itemID = itemID
            self.item = item
            self.queuedAt = queuedAt
        }
    }

    public var operations: [Operation]

    public init(operations: [Operation]) { self.operations = operations }

    /// The most operations one deposit holds; a device with more sends several.
    public static let maximumOperations = 500
    /// The largest body the service takes for one deposit.
    public static let maximumBytes = 4 << 20
}

/// The service's answer to a deposit: how many operations it holds now for the first time, and
/// how many it already held (a deposit sent again after a lost answer or a power cut).
public struct EscrowDepositAnswer: Sendable, Hashable, Codable {
    public var held: Int
    public var alreadyHeld: Int

    public init(held: Int, alreadyHeld: Int) {
        self.held = held
        self.alreadyHeld = alreadyHeld
    }
}

/// What a device revoked with wipe tells the service once its copy is removed
/// (`POST /devices/{id}/wipe-receipt`): when, the ids it purged per table, and how many queued
/// operations went to escrow first.
public struct WipeReceipt: Sendable, Hashable, Codable {
    /// When the device removed its copy (ISO 8601).
    public var wipedAt: String
    /// The ids of the rows removed, per table.
    public var purged: [String: [String]]
    /// The queued operations deposited in escrow before the wipe.
    public var escrowed: Int

    public init(wipedAt: String, purged: [String: [String]], escrowed: Int) {
        self.wipedAt = wipedAt
        self.purged = purged
        self.escrowed = escrowed
    }

    /// The largest receipt the service takes (the ids of some hundred thousand rows).
    public static let maximumBytes = 16 << 20
}
