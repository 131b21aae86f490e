import Foundation
import SyncProtocol

/// `/service/escrow`: the changes revoked devices deposited, each with who, which device, when and
/// what, and a form to apply or discard it; the revocations in force with their devices (those not
/// heard from since); and the receipts of the wipes.
struct ServiceEscrowPage: Encodable, Sendable {
    struct Entry: Encodable, Sendable {
        var id: String
        var user: String
        var device: String
        var deviceHref: String
        var table: String
        var operation: String
        var itemID: String
        /// The values, `name: value` each.
        var values: [String]
        var queuedAt: String
        var receivedAt: String
        var applyHref: String
        var discardHref: String
    }

    struct RevokedDevice: Encodable, Sendable {
        var id: String
        var href: String
        var lastContact: String
        var seenSince: Bool
    }

    struct RevocationRow: Encodable, Sendable {
        var kind: String
        var subject: String
        var wipe: Bool
        var revokedAt: String
        var devices: [RevokedDevice]
        var hasDevices: Bool
    }

    struct Receipt: Encodable, Sendable {
        var device: String
        var user: String
        var wipedAt: String
        var receivedAt: String
        var rows: Int
        var escrowed: Int
        /// The purged ids, per table, cut after a few.
        var purged: String
    }

    var entries: [Entry]
    var hasEntries: Bool
    var revocations: [RevocationRow]
    var hasRevocations: Bool
    var receipts: [Receipt]
    var hasReceipts: Bool

    init(
        entries: [EscrowEntry], receipts: [WipeReceiptRecord], revocations: [Revocation],
        devices: [DeviceRecord], base: String
    ) {
        let readable = { (milliseconds: Int64) in
            ServiceDevicesPage.readable(ProtocolDate.format(milliseconds: milliseconds))
        }
        let deviceHref = { (id: String) in "\(base)/devices/\(NextPageLink.encode(id))" }
        self.entries = entries.map { entry in
            let href = "\(base)/escrow/\(NextPageLink.encode(entry.id))"
            return Entry(
                id: entry.id, user: entry.user ?? "—", device: entry.device, deviceHref: deviceHref(entry.device),
                table: entry.table, operation: entry.operation, itemID: entry.itemID,
                values: ServicePage.valueLines(entry.item),
                queuedAt: ServiceDevicesPage.readable(entry.queuedAt), receivedAt: readable(entry.receivedAt),
                applyHref: href + "/apply", discardHref: href + "/discard")
        }
        hasEntries = !self.entries.isEmpty
        self.revocations = revocations.map { revocation in
            let theirs = devices.filter {
                revocation.kind == .device ? $0.id == revocation.subject : $0.user == revocation.subject
            }
            let rows = theirs.sorted { $0.id < $1.id }.map {
                RevokedDevice(
                    id: $0.id, href: deviceHref($0.id), lastContact: readable($0.lastContact),
                    seenSince: $0.lastContact >= revocation.revokedAt)
            }
            return RevocationRow(
                kind: revocation.kind.rawValue, subject: revocation.subject, wipe: revocation.wipe,
                revokedAt: readable(revocation.revokedAt), devices: rows, hasDevices: !rows.isEmpty)
        }
        hasRevocations = !self.revocations.isEmpty
        self.receipts = receipts.map { receipt in
            let ids = receipt.purged.keys.sorted().map { table in
                let ids = receipt.purged[table] ?? []
                return "\(table): " + ids.prefix(5).joined(separator: ", ")
                    + (ids.count > 5 ? " and \(ids.count - 5) more" : "")
            }
            return Receipt(
                device: receipt.device, user: receipt.user ?? "—",
                wipedAt: ServiceDevicesPage.readable(receipt.wipedAt),
                receivedAt: readable(receipt.receivedAt), rows: receipt.rows, escrowed: receipt.escrowed,
                purged: ids.isEmpty ? "no rows" : ids.joined(separator: "; "))
        }
        hasReceipts = !self.receipts.isEmpty
    }
}
