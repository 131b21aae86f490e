import HTTPServer
import Logging
import SyncProtocol
import Synchronization

/// Who writes to the service: per installation (`X-ZUMO-INSTALLATION-ID`), when it last wrote and
/// which former names of renamed or retired columns it still sends. Kept in the service's
/// database (`__installations`), so the list survives a restart and instances sharing a
/// PostgreSQL database see each other's installations; a bounded number is kept (the least
/// recent are forgotten first), so made-up ids cannot grow it without end.
///
/// A write notes its installation in memory only; the installations noted since the last save
/// are saved together at most every ``flushInterval`` (and when the service stops). Saving on each
/// request would add a database round trip (and on SQLite a durable commit) to every write, for a
/// list whose readers (the service page, `/metrics`) need it to within a second, not to the
/// request; a power cut loses at most the last second of "last write" times, which the next write
/// of each installation restores.
final class InstallationRegistry: Sendable {
    /// One installation as the service saw it.
    struct Installation: Sendable, Equatable {
        let id: String
        /// Milliseconds since 1970 of its latest write.
        var lastWrite: Int64
        /// `table.column` for each old name its writes used, with when it last sent it.
        var oldNames: [String: Int64]

        /// Whether it still writes the old shape of a table.
        var writesOldShape: Bool { !oldNames.isEmpty }

        /// `other` folded in: the later last write, every name at its latest time.
        mutating func merge(_ other: Installation) {
            lastWrite = max(lastWrite, other.lastWrite)
            oldNames.merge(other.oldNames, uniquingKeysWith: max)
        }
    }

    /// The most installations kept.
    static let limit = 10_000
    /// The longest a noted write waits before it is saved.
    static let flushInterval: Duration = .seconds(1)

    private struct State {
        var installations: [String: Installation] = [:]
        /// Ids noted since the last save.
        var unsaved: Set<String> = []
    }

    private let clock: @Sendable () -> Int64
    private let store: any TableStorage
    private let state = Mutex(State())
    private let flusher = Mutex<Task<Void, Never>?>(nil)
    /// Reads what the store holds, once it is ready; readers of the list wait for it.
    private let loading = Mutex<Task<Void, Never>?>(nil)
    private let logger: Logger

    /// A registry kept in `store`: it loads what the store holds once the store is ready, then
    /// saves every ``flushInterval`` what was noted meanwhile.
    init(clock: @escaping @Sendable () -> Int64, store: any TableStorage, logger: Logger) {
        self.clock = clock
        self.store = store
        self.logger = logger
        let loaded = Task { [weak self] in
            guard (try? await store.ready()) != nil else { return }
            await self?.load()
        }
        loading.withLock { $0 = loaded }
        flusher.withLock { task in
            task = Task { [weak self] in
                await loaded.value
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.flushInterval)
                    guard let self else { return }
                    await self.save()
                }
            }
        }
    }

    /// Notes a write of `request` to `table` that used `oldNames` (former or retired column names).
    func wrote(_ request: Request, table: String, oldNames: [String]) {
        guard let raw = request.headers[ProtocolHeader.installationID] else { return }
        let id = String(raw.prefix(64))
        guard !id.isEmpty else { return }
        let now = clock()
        state.withLock { state in
            var installation = state.installations[id] ?? Installation(id: id, lastWrite: now, oldNames: [:])
            installation.lastWrite = now
            for name in oldNames { installation.oldNames["\(table).\(name)"] = now }
            if state.installations[id] == nil, state.installations.count >= Self.limit,
                let oldest = state.installations.values.min(by: { $0.lastWrite < $1.lastWrite })
            {
                state.installations[oldest.id] = nil
                state.unsaved.remove(oldest.id)
            }
            state.installations[id] = installation
            state.unsaved.insert(id)
        }
    }

    /// Every installation, most recent writer first. Where other instances write the same
    /// database, what is noted here is saved first and the list is read from the database.
    func all() async -> [Installation] {
        if store.isShared {
            await save()
            await load()
        } else {
            // The file's list is read once, at start (this process is its only writer).
            await loading.withLock { $0 }?.value
        }
        return state.withLock { Array($0.installations.values) }.sorted {
            ($0.lastWrite, $0.id) > ($1.lastWrite, $1.id)
        }
    }

    /// The installations that still write the old shape of some table.
    func behind() async -> [Installation] { await all().filter(\.writesOldShape) }

    /// Saves what is unsaved and stops saving (the service stops).
    func stop() async {
        let task = flusher.withLock { task in
            task?.cancel()
            return task
        }
        // A save under way finishes first: its installations are no longer noted as unsaved.
        await task?.value
        await save()
    }

    /// Stops saving without a last save (the store is closing).
    func cancel() {
        flusher.withLock { $0?.cancel() }
    }

    /// Saves the installations noted since the last save, in one transaction; on failure they
    /// stay noted for the next try.
    private func save() async {
        let batch: [Installation] = state.withLock { state in
            defer { state.unsaved.removeAll() }
            return state.unsaved.compactMap { state.installations[$0] }
        }
        guard !batch.isEmpty else { return }
        do {
            // In a task of its own, which nobody cancels: a stop cancels the flusher (and one on
            // SIGTERM runs in a cancelled task), and a cancelled PostgreSQL query saves nothing.
            let store = store
            try await Task { try await store.saveInstallations(batch) }.value
        } catch {
            logger.warning("the installations seen writing could not be saved (tried again in a second): \(error)")
            state.withLock { state in
                for installation in batch where state.installations[installation.id] != nil {
                    state.unsaved.insert(installation.id)
                }
            }
        }
    }

    /// Folds the stored installations into memory.
    private func load() async {
        do {
            let stored = try await store.installations()
            state.withLock { state in
                for installation in stored {
                    state.installations[installation.id, default: installation].merge(installation)
                }
            }
        } catch {
            logger.warning("the installations seen writing could not be read: \(error)")
        }
    }
}
