import Foundation
import Synchronization

/// The fleet's background work, one pass a second: save the devices noted since the last pass,
/// fold in what other instances saved, and raise or settle stall alerts; and, where instances share
/// the database, the revocations read again four times a second.
extension Fleet {
    /// Reads what the database holds, once, at start; where instances share the database, what the
    /// others saved since, at every call.
    func loadIfNeeded() async {
        let loaded = state.withLock { $0.loaded }
        if loaded {
            if store.isShared { await readOthers() }
            return
        }
        guard (try? await store.ready()) != nil else { return }
        await readOthers()
        await readRevocations()
        state.withLock { $0.loaded = true }
    }

    /// Reads the revocations again: those other instances made or undid since the last pass.
    func readRevocations() async {
        do {
            try await revocations.reload()
        } catch {
            logger.warning("the revocations could not be read: \(error)")
        }
    }

    /// Folds in the devices saved since the last read (by this instance before a restart, or by
    /// others). Rows saved in the same millisecond as the last read are read again, harmlessly.
    func readOthers() async {
        let since = state.withLock { $0.readUpTo }
        // A second back: a save whose clock ran a little behind ours, or that committed late.
        guard let rows = try? await store.devices(savedSince: max(0, since - 2000)) else { return }
        state.withLock { state in
            if !rows.isEmpty { state.revision &+= 1 }
            for (record, savedAt) in rows {
                if var mine = state.devices[record.id] {
                    mine.merge(record)
                    state.devices[record.id] = mine
                } else if state.devices.count < Self.limit {
                    state.devices[record.id] = record
                }
                state.readUpTo = max(state.readUpTo, savedAt)
            }
        }
    }

    /// Saves the devices noted since the last save, in one transaction; on failure they stay noted
    /// for the next pass.
    func save() async {
        let batch: [DeviceRecord] = state.withLock { state in
            defer { state.unsaved.removeAll() }
            return state.unsaved.compactMap { state.devices[$0] }
        }
        guard !batch.isEmpty else { return }
        do {
            // In a task of its own, which nobody cancels: a stop cancels the pass (and one on SIGTERM
            // runs in a cancelled task), and a cancelled PostgreSQL query saves nothing.
            let store = store
            let now = clock()
            try await Task { try await store.saveDevices(batch, savedAt: now) }.value
            metrics.countFleetSave()
        } catch {
            logger.warning("the devices seen could not be saved (tried again in a second): \(error)")
            state.withLock { state in
                for device in batch where state.devices[device.id] != nil { state.unsaved.insert(device.id) }
            }
        }
    }
}

/// The fleet's pass every second, until cancelled (a job of the service's ``BackgroundWork``).
final class FleetBookkeeping: Sendable {
    private let fleet: Fleet
    private let alerts: FleetAlerts
    /// Passes run so far (tests wait for passes, not for seconds).
    let passes = Mutex(0)
    /// How often the revocations are read again where instances share the database (a small table).
    static let revocationsPeriod = Duration.milliseconds(250)
    /// The fleet's pass runs every fourth beat: once a second.
    static let beatsPerPass = 4

    /// What the beats wait on.
    private let timers: any Clock<Duration>

    init(fleet: Fleet, alerts: FleetAlerts, timers: any Clock<Duration> = ContinuousClock()) {
        self.fleet = fleet
        self.alerts = alerts
        self.timers = timers
    }

    /// Loads what the database holds, then runs the passes until cancelled. The service saves once
    /// more after it stops them.
    func run() async {
        await fleet.loadIfNeeded()
        await alerts.loadOpenEpisodes()
        var beat = 0
        while !Task.isCancelled {
            try? await timers.sleep(for: Self.revocationsPeriod)
            if Task.isCancelled { break }
            // What other instances revoked: refused here within a quarter of a second.
            if fleet.store.isShared { await fleet.readRevocations() }
            beat += 1
            guard beat % Self.beatsPerPass == 0 else { continue }
            // What the other instances saw first, so that this one saves its view merged with theirs.
            if fleet.store.isShared { await fleet.readOthers() }
            await fleet.save()
            await alerts.evaluate()
            passes.withLock { $0 += 1 }
        }
    }
}
