import Foundation
import PostgresNIO
import SyncProtocol

/// One item at a time: each write is one statement, its version check in its condition (see
/// ``WriteRule`` for what a check decides).
extension PostgresTableStore {
    func insert(into table: String, _ changes: ItemChanges, scope: RowScope) async throws(TableError) -> StoredItem {
        let id = changes.id ?? UUID().uuidString.lowercased()
        var schema = try await tableForWriting(table)
        schema = try await ensureColumns(schema, for: changes.fields)
        var statement = PostgresStatement()
        let stamp = statement.stampCTE(table: schema.name, given: givenClock)
        var names = [SystemColumn.id, SystemColumn.createdAt, SystemColumn.updatedAt, SystemColumn.version]
        var values = [statement.bind(.text(id)), stamp.value, stamp.value, stamp.version]
        for field in changes.fields {
            names.append(schema.column(named: field.name)!.name)
            values.append(statement.bind(SQLValue(field.value)))
        }
        if let owner = scope.owner {
            names.append(RowScope.ownerColumn)
            values.append(statement.bind(.text(owner)))
        }
        statement.sql +=
            "INSERT INTO \(SQLDialect.quoted(schema.name)) (\(names.map(SQLDialect.quoted).joined(separator: ", "))) "
            + "VALUES (\(values.joined(separator: ", "))) RETURNING *"
        do throws(TableError) {
            guard let stored = try await run(statement).first else { throw TableError.itemNotFound }
            return published(stored, in: table, scope: scope)
        } catch .storage(.duplicateID) {
            if let existing = try await anyItem(in: schema.name, id: id, scope: scope) {
                throw .alreadyExists(existing)
            }
            throw .alreadyExists(nil)
        }
    }

    func anyItem(in table: String, id: String, scope: RowScope) async throws(TableError) -> StoredItem? {
        guard let schema = try await knownSchema(of: table) else { return nil }
        var statement = PostgresStatement()
        statement.sql = "SELECT * FROM \(SQLDialect.quoted(schema.name)) WHERE \"id\" = \(statement.bind(.text(id)))"
        if let owner = scope.owner {
            statement.sql += " AND \(SQLDialect.quoted(RowScope.ownerColumn)) = \(statement.bind(.text(owner)))"
        }
        return try await run(statement).first
    }

    func update(
        in table: String, id: String, _ changes: ItemChanges, check: VersionCheck, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard var schema = try await knownSchema(of: table) else { throw .itemNotFound }
        schema = try await ensureColumns(schema, for: changes.fields)
        var check = check
        // A lost race is answered from the row that won it; a row that changed between the failed
        // update and the read (deleted, brought back) is tried again.
        for _ in 0..<3 {
            var statement = PostgresStatement()
            let stamp = statement.stampCTE(table: schema.name, given: givenClock, rewrite: true)
            var assignments = [Self.restamp(stamp.value), "\"version\" = \(stamp.version)"]
            for field in changes.fields {
                let column = SQLDialect.quoted(schema.column(named: field.name)!.name)
                assignments.append("\(column) = \(statement.bind(SQLValue(field.value)))")
            }
            let target = SQLDialect.quoted(schema.name)
            let conditions =
                statement.rowConditions(of: target, id: id, versions: [check.ifMatch, check.bodyVersion], scope: scope)
                + ["NOT \(target).\"deleted\""]
            statement.sql +=
                "UPDATE \(target) SET \(assignments.joined(separator: ", ")) "
                + "WHERE \(conditions.joined(separator: " AND ")) RETURNING *"
            if let stored = try await run(statement).first { return published(stored, in: table, scope: scope) }
            // Tried again against the row's version now (read before a schema backfill stamped it),
            // or as it was (the row changed between the update and the read).
            let current = try await decide(.update(check), in: schema.name, id: id, scope: scope).current
            if check.ifMatch != nil || check.bodyVersion != nil {
                check = VersionCheck(ifMatch: current.version, bodyVersion: nil)
            }
        }
        throw .storage(.keptChanging(id: id))
    }

    func setDeleted(
        _ deleted: Bool, in table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard let schema = try await knownSchema(of: table) else { throw .itemNotFound }
        var ifMatch = ifMatch
        for _ in 0..<3 {
            var statement = PostgresStatement()
            let stamp = statement.stampCTE(table: schema.name, given: givenClock, rewrite: true)
            let target = SQLDialect.quoted(schema.name)
            let conditions =
                statement.rowConditions(of: target, id: id, versions: [ifMatch], scope: scope)
                + [deleted ? "NOT \(target).\"deleted\"" : "\(target).\"deleted\""]
            statement.sql +=
                "UPDATE \(target) SET \"deleted\" = \(deleted ? "TRUE" : "FALSE"), \(Self.restamp(stamp.value)), "
                + "\"version\" = \(stamp.version) WHERE \(conditions.joined(separator: " AND ")) RETURNING *"
            if let stored = try await run(statement).first { return published(stored, in: table, scope: scope) }
            let decided = try await decide(
                .setDeleted(deleted, ifMatch: ifMatch), in: schema.name, id: id, scope: scope)
            if decided.unchanged { return decided.current }
            if ifMatch != nil { ifMatch = decided.current.version }
        }
        throw .storage(.keptChanging(id: id))
    }

    func remove(
        from table: String, id: String, ifMatch: String?, scope: RowScope
    ) async throws(TableError) -> StoredItem {
        guard let schema = try await knownSchema(of: table) else { throw .itemNotFound }
        var ifMatch = ifMatch
        for _ in 0..<3 {
            var statement = PostgresStatement()
            // A rewrite: pages after this row move up (see PageCursors).
            _ = statement.stampCTE(table: schema.name, given: givenClock, rewrite: true)
            let target = SQLDialect.quoted(schema.name)
            let conditions = statement.rowConditions(of: target, id: id, versions: [ifMatch], scope: scope)
            statement.sql += "DELETE FROM \(target) WHERE \(conditions.joined(separator: " AND ")) RETURNING *"
            if let removed = try await run(statement).first { return removed }
            let current = try await decide(.remove(ifMatch: ifMatch), in: schema.name, id: id, scope: scope).current
            if ifMatch != nil { ifMatch = current.version }
        }
        throw .storage(.keptChanging(id: id))
    }

    /// The assignment of a rewritten row's `updatedAt`: its stamp, or one past the row's last when
    /// that is later (stamps of different writes may be equal; a row's own always move forward, so
    /// a puller positioned on the row's previous stamp sees it again).
    static func restamp(_ stamp: String) -> String {
        "\"updatedAt\" = greatest(\(stamp), \"updatedAt\" + 1)"
    }

    /// Reads row `id` after a conditional write found nothing to change, and applies
    /// ``WriteRule`` to it: the row to write again, or to answer unchanged (`unchanged` is true),
    /// or the refusal thrown.
    private func decide(
        _ request: WriteRule.Request, in table: String, id: String, scope: RowScope
    ) async throws(TableError) -> (current: StoredItem, unchanged: Bool) {
        let current = try await anyItem(in: table, id: id, scope: scope)
        let before =
            WriteRule.needsVersionBeforeBackfill(request, current: current)
            ? try await versionBeforeBackfill(in: table, current!) : nil
        switch WriteRule.decide(request, current: current, versionBeforeBackfill: before) {
        case .refuse(let error): throw error
        case .unchanged(let item): return (item, true)
        case .write: return (current!, false)
        }
    }

    /// Tells the instances' subscribers of a row this instance wrote (``PostgresChangeBus``).
    private func published(_ item: StoredItem, in table: String, scope: RowScope) -> StoredItem {
        bus.committed(
            .init(table: table, cursor: ChangeCursor(updatedAt: item.updatedAt, id: item.id), owner: scope.owner))
        return item
    }
}
