import Foundation
import GRDB
import SyncProtocol

/// What this store did about a revocation of its access (``AccessRevocation``), saved in the store
/// (`__config`) before each step so that a power cut at any point resumes where it stopped: the
/// store is either as it was with its changes queued, or its changes are in escrow and it is
/// read-only or wiped — never wiped with a change lost. While it is saved, local changes are refused
/// (``SyncError/accessRevoked(_:)``); a sync that succeeds (access restored) removes it.
public struct RevokedAccess: Sendable, Hashable, Codable {
    /// Where the store is in the revocation's steps.
    public enum Phase: String, Sendable, Hashable, Codable {
        /// Refusing local changes; depositing the queued ones in the service's escrow.
        case depositing
        /// Every queued change is in escrow and the queue is empty; the data is kept, read-only.
        case readOnly
        /// Every queued change is in escrow; the rows and the queue are removed.
        case wiped
    }

    public var revocation: AccessRevocation
    public var phase: Phase
    /// When this store first heard of it.
    public var noticedAt: Date
    /// Queued changes the service holds in escrow.
    public var escrowed: Int
    /// The receipt of the wipe (``Phase/wiped``): sent to the service until it takes it.
    public var receipt: WipeReceipt?
    /// Whether the service took ``receipt``.
    public var receiptSent: Bool

    public init(
        revocation: AccessRevocation, phase: Phase, noticedAt: Date, escrowed: Int = 0, receipt: WipeReceipt? = nil,
        receiptSent: Bool = false
    ) {
        self.revocation = revocation
        self.phase = phase
        self.noticedAt = noticedAt
        self.escrowed = escrowed
        self.receipt = receipt
        self.receiptSent = receiptSent
    }

    /// Rows the wipe removed.
    public var purgedRows: Int { receipt?.purged.values.reduce(0) { $0 + $1.count } ?? 0 }

    /// What happened, for the dashboard's banner and the command line.
    public var summary: String {
        let who = revocation.whom.prefix(1).uppercased() + revocation.whom.dropFirst()
        let escrow =
            escrowed == 0
            ? "There were no unsynced changes."
            : "Your \(escrowed) unsynced change\(escrowed == 1 ? " is" : "s are") kept in the service's escrow for its admin to apply or discard."
        switch phase {
        case .depositing:
            return "\(who) no longer has access to the service: its admin revoked it. Your unsynced changes are "
                + "being handed to the service's escrow; nothing can be changed here meanwhile."
        case .readOnly:
            return "\(who) no longer has access to the service: its admin revoked it. \(escrow) "
                + "Your data stays here, read-only, until the admin restores access."
        case .wiped:
            return "\(who) no longer has access to the service: its admin revoked it and asked that this copy be "
                + "removed. \(escrow) \(purgedRows) row\(purgedRows == 1 ? " was" : "s were") removed from this device"
                + (receiptSent
                    ? "; the service has the receipt." : "; the receipt goes to the service at the next contact.")
        }
    }
}

extension RevokedAccess {
    /// Where it is saved in `__config`, as JSON.
    static let key = "revokedAccess"

    /// What `store` saved, in the caller's transaction; nil when its access is not revoked.
    static func saved(_ store: LocalStore, _ db: Database) throws -> RevokedAccess? {
        try store.config(db, key).flatMap { try? SyncContext.decoder.decode(RevokedAccess.self, from: Data($0.utf8)) }
    }

    /// Saves `revoked` (nil: removes it) in the caller's transaction.
    static func save(_ revoked: RevokedAccess?, _ store: LocalStore, _ db: Database) throws {
        try store.setConfig(
            db, key, try revoked.map { String(decoding: try SyncContext.encoder.encode($0), as: UTF8.self) })
    }
}
