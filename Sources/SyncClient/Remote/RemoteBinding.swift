import Foundation
import GRDB

/// The service a store syncs with, kept in the store's `__config`: `remoteURL` (the address
/// requests go to) and `boundService` (the ``ServiceIdentity`` of the service whose rows and delta
/// tokens the store holds). The only code that reads or writes them, and the one place where a
/// store moves from one service to another.
///
/// A store is bound to one service. Pointing it at another:
/// - removes every row the old service sent (rows without a queued change) and every delta token,
///   so the next pull fetches all of the new service's rows, and forgets the last sync's summary;
/// - is refused with ``SyncError/remoteSwitchRefused(_:)`` while changes are queued (pending,
///   attempted, refused or in conflict), unless the caller chose what becomes of them
///   (``RemoteSwitchChoice``): pushed to the new service (their rows stay) or discarded (their rows
///   go too). Rows created here and never pushed always have a queued insert, so they are never
///   removed silently.
///
/// A store bound to no service (new, or written before binding existed) is bound, without removing
/// anything, to the first address it is given — or, when it is opened without one, to the address it
/// saved. Setting no address keeps the binding and the rows.
struct RemoteBinding: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue

    private static let addressKey = "remoteURL"
    private static let serviceKey = "boundService"

    /// The saved address, if any.
    func address(_ db: Database) throws -> String? {
        try store.config(db, Self.addressKey)
    }

    /// The service the store is bound to; nil when unbound.
    func service(_ db: Database) throws -> ServiceIdentity? {
        try store.config(db, Self.serviceKey).map(ServiceIdentity.init(saved:))
    }

    /// The identity of `url` unless the caller named the service.
    static func identity(of url: URL, named service: ServiceIdentity?) -> ServiceIdentity {
        service ?? ServiceIdentity(url: url) ?? ServiceIdentity(saved: url.absoluteString)
    }

    /// Binds a store that saved an address but no service (written before binding existed) to
    /// that address's service, removing nothing.
    func bindSavedAddress(_ db: Database) throws {
        guard try service(db) == nil, let saved = try address(db), let url = URL(string: saved) else { return }
        try store.setConfig(db, Self.serviceKey, Self.identity(of: url, named: nil).text)
    }

    /// Whether pointing the store at `service` moves it to another service.
    ///
    /// - Throws: ``SyncError/remoteSwitchRefused(_:)`` when it does, changes are queued and no
    ///   `choice` was made.
    func isSwitch(_ db: Database, to service: ServiceIdentity, choice: RemoteSwitchChoice?) throws -> Bool {
        guard let bound = try self.service(db), bound != service else { return false }
        if choice == nil, let refusal = try refusal(db, from: bound, to: service) {
            throw SyncError.remoteSwitchRefused(refusal)
        }
        return true
    }

    /// Points the store at `url` (nil: no service), identified as `service` when given, else by
    /// the address; moves it to that service when it is another one (see the type's summary).
    @discardableResult
    func point(
        _ db: Database, to url: URL?, service: ServiceIdentity? = nil, choice: RemoteSwitchChoice?
    ) throws -> RemoteChange {
        guard let url else {
            try store.setConfig(db, Self.addressKey, nil)
            return .cleared
        }
        let identity = Self.identity(of: url, named: service)
        try store.setConfig(db, Self.addressKey, url.absoluteString)
        guard let bound = try self.service(db) else {
            try store.setConfig(db, Self.serviceKey, identity.text)
            return .bound(identity)
        }
        guard bound != identity else { return .unchanged }
        let refusal = try refusal(db, from: bound, to: identity)
        if let refusal, choice == nil { throw SyncError.remoteSwitchRefused(refusal) }
        var report = RemoteSwitchReport(
            from: bound, to: identity, removedRows: 0, carriedOperations: 0, discardedOperations: 0)
        switch choice {
        case .push?:
            report.carriedOperations = try queue.carryOver(db)
        case .discard?, nil:
            report.discardedOperations = refusal?.total ?? 0
            try queue.removeAll(db)
        }
        for table in try dataTables(db) {
            let removed = try removeRows(of: table, in: db)
            report.removedRows += removed
            try queue.history.recordTableEvent(
                db, .remoteSwitched, table: table,
                detail: "from \(bound.text) to \(identity.text): \(removed) local rows removed")
        }
        try store.removeDeltaTokens(db)
        try store.setConfig(db, Remote.lastSyncKey, nil)
        try store.setConfig(db, Reconciler.epochKey, nil)
        try store.setConfig(db, Reconciler.restoreNoticeKey, nil)
        try store.setConfig(db, Self.serviceKey, identity.text)
        return .switched(report)
    }

    /// The queued changes that stop a switch from `bound` to `service`; nil when there are none.
    private func refusal(
        _ db: Database, from bound: ServiceIdentity, to service: ServiceIdentity
    ) throws
        -> RemoteSwitchRefusal?
    {
        let counts = try queue.counts(db)
        let refusal = RemoteSwitchRefusal(
            from: bound, to: service, pending: counts.filter(\.key.isWaiting).values.reduce(0, +),
            conflicts: counts[.conflict] ?? 0, failed: counts[.failed] ?? 0)
        return refusal.total > 0 ? refusal : nil
    }

    /// Every table of synced rows in the file: those the store was opened with, and those of earlier
    /// openings (each has its row count in `__rowCounts`).
    private func dataTables(_ db: Database) throws -> [String] {
        let counted = try String.fetchAll(
            db,
            sql: """
                SELECT DISTINCT tableName FROM __rowCounts
                WHERE tableName IN (SELECT name FROM sqlite_master WHERE type = 'table')
                """)
        return Set(store.tables.keys).union(counted).sorted()
    }

    /// Removes the table's rows that have no queued change (those came from the old service);
    /// returns how many.
    private func removeRows(of table: String, in db: Database) throws -> Int {
        try db.execute(
            sql: """
                DELETE FROM \(table.quotedSQLName)
                WHERE id NOT IN (SELECT itemId FROM __operations WHERE tableName = ?)
                """, arguments: [table])
        return db.changesCount
    }
}
