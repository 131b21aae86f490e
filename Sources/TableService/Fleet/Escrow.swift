import Foundation
import SyncProtocol

/// The changes revoked devices deposited (`__escrow`) and the receipts of their wipes
/// (`__wipeReceipts`), in the database so that every instance shares them. An entry is held — never
/// applied — until the admin applies it through the normal write path or discards it
/// (`docs/fleet.md#revoking-access`).
struct Escrow: Sendable {
    let store: any TableStorage
    let clock: @Sendable () -> Int64

    static func createSQL(dialect: SQLDialect) -> [String] {
        let text = dialect.textColumn
        let integer = dialect.integerColumn
        return [
            """
            CREATE TABLE IF NOT EXISTS "__escrow" (
                "id" \(text) PRIMARY KEY, "device" \(text) NOT NULL, "user" \(text), "operationId" \(integer) NOT NULL,
                "tableName" \(text) NOT NULL, "operation" \(text) NOT NULL, "itemId" \(text) NOT NULL, "item" \(text),
                "queuedAt" \(text) NOT NULL, "receivedAt" \(integer) NOT NULL, UNIQUE ("device", "operationId"))
            """,
            """
            CREATE TABLE IF NOT EXISTS "__wipeReceipts" (
                "device" \(text) NOT NULL, "user" \(text), "wipedAt" \(text) NOT NULL, "receivedAt" \(integer) NOT NULL,
                "escrowed" \(integer) NOT NULL, "rows" \(integer) NOT NULL, "purged" \(text) NOT NULL,
                PRIMARY KEY ("device", "wipedAt"))
            """,
        ]
    }

    /// Holds the operations `device` deposited (signed in as `user`); those it holds already are
    /// counted, not stored again.
    func deposit(
        _ deposit: EscrowDeposit, device: String, user: String?
    ) async throws(TableError) -> EscrowDepositAnswer {
        guard !deposit.operations.isEmpty else { return EscrowDepositAnswer(held: 0, alreadyHeld: 0) }
        let ids = deposit.operations.map(\.operationID)
        let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        let held = try await store.query(
            SQLStatement(
                sql:
                    "SELECT \"operationId\" FROM \"__escrow\" WHERE \"device\" = ? AND \"operationId\" IN (\(placeholders))",
                values: [.text(device)] + ids.map(SQLValue.integer)))
        let already = Set(try held.map { row throws(TableError) in try row.integer("operationId") })
        let now = clock()
        let fresh = deposit.operations.filter { !already.contains($0.operationID) }
        try await store.execute(
            fresh.map { operation in
                SQLStatement(
                    sql: """
                        INSERT INTO "__escrow" ("id", "device", "user", "operationId", "tableName", "operation", "itemId",
                        "item", "queuedAt", "receivedAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT ("device", "operationId") DO NOTHING
                        """,
                    values: [
                        .text(UUID().uuidString.lowercased()), .text(device), user.map(SQLValue.text) ?? .null,
                        .integer(operation.operationID), .text(operation.table), .text(operation.operation),
                        .text(operation.itemID), operation.item.map { .text($0.jsonText) } ?? .null,
                        .text(operation.queuedAt), .integer(now),
                    ])
            })
        return EscrowDepositAnswer(held: fresh.count, alreadyHeld: already.count)
    }

    /// Every entry held, the oldest first.
    func entries() async throws(TableError) -> [EscrowEntry] {
        try await select("")
    }

    /// The entry `id`; nil when none is held.
    func entry(_ id: String) async throws(TableError) -> EscrowEntry? {
        try await select("WHERE \"id\" = ?", [.text(id)]).first
    }

    /// Removes the entry `id` (applied or discarded); false when none was held.
    func remove(_ id: String) async throws(TableError) -> Bool {
        guard try await entry(id) != nil else { return false }
        try await store.execute([SQLStatement(sql: "DELETE FROM \"__escrow\" WHERE \"id\" = ?", values: [.text(id)])])
        return true
    }

    private func select(_ condition: String, _ values: [SQLValue] = []) async throws(TableError) -> [EscrowEntry] {
        let rows = try await store.query(
            SQLStatement(
                sql: """
                    SELECT "id", "device", "user", "operationId", "tableName", "operation", "itemId", "item", "queuedAt",
                    "receivedAt" FROM "__escrow" \(condition) ORDER BY "receivedAt", "device", "operationId"
                    """,
                values: values))
        return try rows.map { row throws(TableError) in
            EscrowEntry(
                id: try row.text("id"), user: try row.optionalText("user"), device: try row.text("device"),
                operationID: try row.integer("operationId"), table: try row.text("tableName"),
                operation: try row.text("operation"), itemID: try row.text("itemId"),
                item: try row.optionalText("item").flatMap {
                    try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8))
                },
                queuedAt: try row.text("queuedAt"), receivedAt: try row.integer("receivedAt"))
        }
    }

    // MARK: Receipts

    /// Keeps the receipt of `device`'s wipe (a receipt sent again replaces the first).
    func saveReceipt(_ receipt: WipeReceipt, device: String, user: String?) async throws(TableError) {
        let purged = JSONValue.object(receipt.purged.mapValues { .array($0.map(JSONValue.string)) }).jsonText
        let key: [SQLValue] = [.text(device), .text(receipt.wipedAt)]
        try await store.execute([
            SQLStatement(sql: "DELETE FROM \"__wipeReceipts\" WHERE \"device\" = ? AND \"wipedAt\" = ?", values: key),
            SQLStatement(
                sql: """
                    INSERT INTO "__wipeReceipts" ("device", "user", "wipedAt", "receivedAt", "escrowed", "rows", "purged")
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                values: [
                    .text(device), user.map(SQLValue.text) ?? .null, .text(receipt.wipedAt), .integer(clock()),
                    .integer(Int64(receipt.escrowed)),
                    .integer(Int64(receipt.purged.values.reduce(0) { $0 + $1.count })),
                    .text(purged),
                ]),
        ])
    }

    /// The receipts of `device`'s wipes (every device's when nil), the newest first.
    func receipts(device: String? = nil) async throws(TableError) -> [WipeReceiptRecord] {
        let rows = try await store.query(
            SQLStatement(
                sql: """
                    SELECT "device", "user", "wipedAt", "receivedAt", "escrowed", "rows", "purged" FROM "__wipeReceipts"
                    \(device == nil ? "" : "WHERE \"device\" = ?") ORDER BY "receivedAt" DESC
                    """,
                values: device.map { [.text($0)] } ?? []))
        return try rows.map { row throws(TableError) in
            let purged =
                (try? JSONDecoder().decode([String: [String]].self, from: Data(try row.text("purged").utf8))) ?? [:]
            return WipeReceiptRecord(
                device: try row.text("device"), user: try row.optionalText("user"), wipedAt: try row.text("wipedAt"),
                receivedAt: try row.integer("receivedAt"), escrowed: Int(try row.integer("escrowed")),
                rows: Int(try row.integer("rows")),
                purged: purged)
        }
    }
}

/// One change a revoked device deposited, as `GET /service/api/escrow` lists it.
struct EscrowEntry: Sendable, Hashable, Encodable {
    var id: String
    var user: String?
    var device: String
    var operationID: Int64
    var table: String
    var operation: String
    var itemID: String
    var item: JSONValue?
    var queuedAt: String
    /// Milliseconds since 1970.
    var receivedAt: Int64

    private enum CodingKeys: String, CodingKey {
        case id, user, device, table, operation, itemID = "itemId", item, queuedAt, receivedAt
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(user, forKey: .user)
        try container.encode(device, forKey: .device)
        try container.encode(table, forKey: .table)
        try container.encode(operation, forKey: .operation)
        try container.encode(itemID, forKey: .itemID)
        try container.encode(item, forKey: .item)
        try container.encode(queuedAt, forKey: .queuedAt)
        try container.encode(ProtocolDate.format(milliseconds: receivedAt), forKey: .receivedAt)
    }
}

/// A device's receipt of its wipe, as kept.
struct WipeReceiptRecord: Sendable, Hashable, Encodable {
    var device: String
    var user: String?
    var wipedAt: String
    /// Milliseconds since 1970.
    var receivedAt: Int64
    var escrowed: Int
    var rows: Int
    var purged: [String: [String]]
}
