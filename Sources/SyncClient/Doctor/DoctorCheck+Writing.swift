import Foundation
import SyncProtocol

extension DoctorCheck {
    /// A version that no row holds ("doctor-stale" in base64).
    static let staleVersion = "ZG9jdG9yLXN0YWxl"

    /// `If-Match` with a stale version → 412 with the current item.
    static let ifMatch = DoctorCheck(
        name: "if-match", asks: "Is a change with a stale If-Match refused with 412 and the current item?",
        writes: true,
        probe: { session throws(SyncError) in
            let inserted = try await session.insert("stale")
            let id = session.prefix + "stale"
            var body: Item = ["text": .string("todosync doctor: stale change")]
            if session.dialect == .v3 { body["id"] = .string(id) }
            let change = try await session.send(
                session.dialect.updateMethod, id: id, body: body, ifMatch: staleVersion)
            return [inserted, change]
        },
        judge: { _, exchanges in
            guard exchanges.count == 2, let version = exchanges[0].item?["version"]?.stringValue else {
                return .failed("The probe row could not be inserted (\(exchanges.first?.answerLine ?? "")).")
            }
            let answer = exchanges[1]
            guard answer.status == 412 else {
                return .failed(
                    "A change with a stale If-Match was answered with \(answer.answerLine), not 412: "
                        + (answer.status.map { (200..<300).contains($0) } == true
                            ? "the service overwrote a newer version (lost update)."
                            : "a client cannot detect conflicts."))
            }
            let id = exchanges[0].item?["id"]?.stringValue
            guard let item = answer.item, item["id"]?.stringValue == id, item["version"]?.stringValue == version else {
                return .failed(
                    "412 came without the current item (id \(id ?? "?"), version \(version)): a client must read it "
                        + "again to show the conflict.")
            }
            return .passed("412 with the current item (version \(version)).")
        })

    /// Duplicate id → 409, and what its body holds.
    static let duplicate = DoctorCheck(
        name: "duplicate-id", asks: "Is an insert of an existing id refused with 409, and what does its body hold?",
        writes: true,
        probe: { session throws(SyncError) in
            let first = try await session.insert("duplicate")
            let second = try await session.send(
                .post,
                body: ["id": .string(session.prefix + "duplicate"), "text": .string("todosync doctor: duplicate")])
            return [first, second]
        },
        judge: { _, exchanges in
            guard exchanges.count == 2, exchanges[0].status == 201 || exchanges[0].status == 200 else {
                return .failed("The probe row could not be inserted (\(exchanges.first?.answerLine ?? "")).")
            }
            let answer = exchanges[1]
            let id = exchanges[0].item?["id"]?.stringValue
            guard answer.status == 409 else {
                return .failed("An insert of an existing id was answered with \(answer.answerLine), not 409.")
            }
            guard let item = answer.item, item["id"]?.stringValue == id else {
                return .failed(
                    (answer.responseBody ?? "").isEmpty
                        ? "409 without a body: a client cannot show the service's side of the conflict without "
                            + "reading the item again."
                        : "409 whose body is not the item '\(id ?? "?")': a client cannot use it.")
            }
            let version = exchanges[0].item?["version"]?.stringValue
            if let version, item["version"]?.stringValue == version {
                return .passed("409 with the service's current item (version \(version)).")
            }
            return .passed(
                "409 with the item sent echoed back, not the service's copy (as the official Mobile Apps server "
                    + "does): a client must GET the item to see the service's side.")
        })

    /// Soft delete: a deleted row leaves the default query and stays visible with `__includeDeleted`.
    static let softDelete = DoctorCheck(
        name: "soft-delete",
        asks: "Does a deleted row leave the list, and come back marked deleted with __includeDeleted?",
        writes: true,
        probe: { session throws(SyncError) in
            let inserted = try await session.insert("deleted")
            let id = session.prefix + "deleted"
            let version = inserted.item?["version"]?.stringValue
            let deletion = try await session.send(.delete, id: id, ifMatch: version)
            let filter = ("$filter", "id eq '\(id)'")
            let hidden = try await session.send(.get, query: [filter])
            let shown = try await session.send(
                .get, query: [filter, (session.dialect.includeDeletedParameter, "true")])
            return [inserted, deletion, hidden, shown]
        },
        judge: { dialect, exchanges in
            guard exchanges.count == 4 else {
                return .failed("The probe row could not be inserted (\(exchanges.first?.answerLine ?? "")).")
            }
            let (deletion, hidden, shown) = (exchanges[1], exchanges[2], exchanges[3])
            guard let status = deletion.status, [200, 204].contains(status) else {
                return .failed("DELETE with the current If-Match was answered with \(deletion.answerLine).")
            }
            guard hidden.rows(dialect)?.isEmpty == true else {
                return .failed("The deleted row is still in the list without \(dialect.includeDeletedParameter).")
            }
            guard let rows = shown.rows(dialect), let row = rows.first else {
                return .failed(
                    "With \(dialect.includeDeletedParameter)=true the deleted row is gone: the service deletes rows for good, "
                        + "so incremental pull cannot tell other devices about deletions.")
            }
            guard row["deleted"]?.boolValue == true else {
                return .failed("With \(dialect.includeDeletedParameter)=true the row came back without deleted: true.")
            }
            return .passed(
                "DELETE \(status); the row left the list and came back with deleted: true under "
                    + "\(dialect.includeDeletedParameter)=true.")
        })
}
