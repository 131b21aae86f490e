import Foundation
import GRDB
import SyncProtocol

/// The offline sync client: one SQLite store, the operation queue, and the remote table service.
///
/// Local reads and writes never touch the network and never wait for a running sync. `push()`,
/// `pull` and Use Client run one at a time: a second caller of the same job joins the running one.
///
/// It is a lobby: each concern is a type of its own holding only the parts it needs (the store, the
/// queue, the job slot, the monitor, the ``Remote``), and the context's methods forward to it. Its
/// own state is the push window.
///
/// ```swift
/// let context = try SyncContext(path: "todo.sqlite", configuration: .init(remoteURL: url))
/// let todo = context.table("todoitem")
/// try todo.insert(["text": "buy milk", "complete": false])
/// let result = try await context.push()
/// try await todo.pull(queryId: "all")
/// ```
public actor SyncContext {
    nonisolated let store: LocalStore
    nonisolated let queue: SyncOperationQueue
    nonisolated let monitor = SyncMonitor()
    /// Every exchange with the service, kept in the store (see ``exchanges(_:)``).
    nonisolated let recorder: FlightRecorder
    /// This store's installation id (a UUID kept in the store), sent as `X-ZUMO-INSTALLATION-ID`.
    public nonisolated let installationID: String
    /// What this device tells a todosync service's fleet view: its queue, and its support bundle
    /// when the service's admin asks (give the bundle's maker with
    /// ``DeviceReporting/onBundleRequest(_:)``).
    public nonisolated let reporting: DeviceReporting
    /// The conflict policy of tables that have none saved (see ``Conflicts/policy(for:)``).
    public nonisolated let defaultConflictPolicy: ConflictPolicy
    /// How many operations push keeps on the wire at once (see ``SyncConfiguration/pushWindow``).
    public private(set) var pushWindow: Int
    /// The service it syncs with: the address, the credentials and the transport.
    nonisolated let remote: Remote
    // What the jobs run (see `SyncContext+Jobs.swift`), and the restore and revocation state they keep.
    nonisolated let pusher: Pusher
    nonisolated let puller: Puller
    nonisolated let verifier: Verifier
    nonisolated let reconciler: Reconciler
    nonisolated let revocation: RevocationSettlement
    /// The protocol chosen for the remote (see ``SyncConfiguration/tableProtocol``).
    public nonisolated var protocolChoice: ProtocolChoice { monitor.protocolChoice }
    /// The protocol in use; nil while `auto` has not asked the service yet.
    public nonisolated var tableProtocol: TableProtocol? { monitor.tableProtocol }
    /// What opening with ``SyncConfiguration/remoteURL`` did to the store's binding (nil: opened
    /// without an address): a switch says which rows went and which changes were kept.
    public nonisolated let openingChange: RemoteChange?
    /// The one job it runs at a time: what runs, Cancel, and what observers hear of each job.
    public nonisolated let jobs: JobSlot

    /// The conflicts waiting for a decision, and how to decide them.
    public nonisolated var conflicts: Conflicts {
        Conflicts(settlement: pusher.settlement, pusher: pusher, jobs: jobs)
    }

    /// The queue of local changes waiting for the service.
    public nonisolated var operations: QueuedOperations {
        QueuedOperations(queue: queue, push: { try await self.push() })
    }

    /// The conflict journal: its entries, and Overturn and Undo.
    public nonisolated var journal: DecisionJournal { DecisionJournal(queue: queue, jobs: jobs, pusher: pusher) }

    /// Opens (creating if needed) the store at `path`, with `todoitem`, the given tables and every
    /// table the store held already.
    ///
    /// - Throws: ``SyncError/invalidTableName(_:)`` for a table whose name cannot be one.
    public init(
        path: String, tables: [TableDescription] = [], configuration: SyncConfiguration = .init()
    )
        throws(SyncError)
    {
        var described = [TableDescription.todoItem]
        for table in tables {
            if let index = described.firstIndex(where: { $0.name == table.name }) {
                described[index] = table
            } else {
                described.append(table)
            }
        }
        store = try LocalStore(path: path, tables: described)
        queue = SyncOperationQueue(store: store)
        recorder = FlightRecorder(store: store)
        installationID = try Self.installationID(of: store)
        reporting = DeviceReporting { [store, queue] in Self.reportedFigures(store: store, queue: queue) }
        defaultConflictPolicy = configuration.conflictPolicy
        pushWindow = configuration.pushWindow
        let (store, queue, monitor) = (self.store, self.queue, self.monitor)
        let remote = try Remote(
            path: path, store: store, queue: queue, monitor: monitor, recorder: recorder,
            installationID: installationID, reporting: reporting, configuration: configuration)
        let (opening, offline) = try store.write { db in
            let opening = try remote.open(db, configuration)
            try queue.recoverInterrupted(db)
            return (opening, try store.config(db, "offline") == "true")
        }
        openingChange = opening.change
        monitor.offline = offline
        try remote.connect(opening)
        self.remote = remote
        let revocation = RevocationSettlement(store: store, queue: queue, remote: remote)
        self.revocation = revocation
        jobs = JobSlot(
            recordLastSync: { [remote] in await remote.recordLastSync($0) },
            ending: { [revocation, recorder] job, ending in
                let settled = await revocation.settle(after: job, ending)
                await recorder.flush()
                return settled
            })
        let reconciler = Reconciler(store: store, queue: queue, monitor: monitor)
        self.reconciler = reconciler
        let gate = TransportGate(remote: remote, queue: queue, reconciler: reconciler)
        let settlement = ConflictSettlement(store: store, queue: queue, defaultPolicy: configuration.conflictPolicy)
        pusher = Pusher(
            store: store, queue: queue, monitor: monitor, gate: gate, settlement: settlement,
            connectionRetry: configuration.connectionRetry)
        puller = Puller(
            store: store, queue: queue, monitor: monitor, gate: gate, connectionRetry: configuration.connectionRetry)
        verifier = Verifier(store: store, queue: queue, monitor: monitor, gate: gate)
    }

    /// The table named `name`; it must have been described (when the context was opened, by
    /// ``describe(_:)``, or by an earlier run on the same store).
    public nonisolated func table(_ name: String) -> SyncTable {
        SyncTable(context: self, name: name)
    }

    /// Adds the table `name` to the store, with no column yet (pulls and edits add them), or returns
    /// it as the store holds it. Each table has its own delta tokens, policy and counts.
    ///
    /// - Throws: ``SyncError/invalidTableName(_:)`` unless the name is 1 to 64 letters, digits and
    ///   underscores, not starting with a digit or `__`.
    @discardableResult
    public nonisolated func describe(_ name: String) async throws(SyncError) -> TableDescription {
        try await describe(TableDescription(name: name, columns: []))
    }

    /// Adds `table` to the store, or adds the columns of `table` it lacks (the columns it has keep
    /// their types). Returns the table as the store now holds it.
    @discardableResult
    public nonisolated func describe(_ table: TableDescription) async throws(SyncError) -> TableDescription {
        try LocalStore.checkTableName(table.name)
        if let held = store.tables[table.name], table.columns.allSatisfy({ held.columnType($0.name) != nil }) {
            return held
        }
        let described = try await write { [store] db in try store.describe(db, table) }
        if let index = store.listIndexes[table.name] { store.listIndexer.catchUp(index, in: store.pool) }
        return described
    }

    /// The table `name` as the store holds it now (its columns grow as pulls and edits bring new ones).
    public nonisolated func description(of name: String) throws(SyncError) -> TableDescription {
        try store.description(of: name)
    }

    /// The described tables, by name.
    public nonisolated var tables: [TableDescription] {
        store.tables.values.sorted { $0.name < $1.name }
    }

    /// The path of the SQLite file.
    public nonisolated var path: String { store.pool.path }

    // MARK: Settings

    /// Turns offline mode on or off (saved in the store). Offline, edits queue and push/pull refuse;
    /// turning it on cancels a running push, pull or Use Client (it stops with ``StopReason/cancelled``).
    public nonisolated func setOffline(_ offline: Bool) async throws(SyncError) {
        try await write { [store] db in try store.setConfig(db, "offline", offline ? "true" : nil) }
        monitor.offline = offline
        if offline { jobs.cancel() }
    }

    /// Whether offline mode is on.
    public nonisolated var isOffline: Bool { monitor.offline }

    /// Changes how many operations the following pushes keep on the wire at once (see
    /// ``SyncConfiguration/pushWindow``).
    public func setPushWindow(_ window: Int) {
        pushWindow = SyncConfiguration.clampedPushWindow(window)
    }

    // MARK: Progress and status

    /// What is running now (push/pull and counts); never waits.
    public nonisolated var progress: SyncProgress { monitor.progress }

    /// Every change of ``progress`` (the current value first) until the caller stops listening.
    public nonisolated func progressUpdates() -> AsyncStream<SyncProgress> { monitor.updates() }

    /// The last push or pull's outcome.
    public nonisolated var lastSync: SyncSummary? { monitor.lastSync }

    /// Pending, conflict and failed counts plus progress, from one small query.
    public nonisolated func status() throws(SyncError) -> SyncStatus {
        let (counts, held, revoked) = try read { [queue, store] db in
            (try queue.counts(db), try queue.heldCounts(db), try RevokedAccess.saved(store, db))
        }
        // A held operation is counted as held only, whatever its state underneath.
        let pending =
            counts.filter(\.key.isWaiting).values.reduce(0, +) - held.filter(\.key.isWaiting).values.reduce(0, +)
        return SyncStatus(
            pending: pending, conflicts: counts[.conflict] ?? 0, failed: (counts[.failed] ?? 0) - (held[.failed] ?? 0),
            held: held.values.reduce(0, +), operations: counts.values.reduce(0, +), offline: monitor.offline,
            remoteURL: monitor.remote,
            tableProtocol: monitor.tableProtocol, progress: monitor.progress, lastSync: monitor.lastSync,
            revokedAccess: revoked)
    }

    static let encoder = JSONEncoder.todosync()
    static let decoder = JSONDecoder.todosync()

    // MARK: Database helpers

    nonisolated func read<T>(_ body: (Database) throws -> T) throws(SyncError) -> T {
        try store.read(body)
    }

    /// Runs `body` in a write transaction while the calling task is suspended: the commit syncs the
    /// disk (`synchronous = FULL`), which may take seconds when the disk is busy, and no cooperative
    /// thread waits for it (on a two-core machine two waiting writes would stall every other task).
    nonisolated func write<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(SyncError) -> T {
        try await store.asyncWrite(body)
    }

    /// Closes the store's connections; the context must not be used afterwards.
    public func close() throws(SyncError) {
        monitor.finishAll()
        store.changes.finishAll()
        remote.close()
        recorder.flushNow()
        store.listIndexer.stop()
        do { try store.pool.close() } catch { throw .storage(StoreFailure(error)) }
    }
}
