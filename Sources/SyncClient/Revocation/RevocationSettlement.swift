import Foundation
import GRDB
import SyncProtocol

/// What a store does when the service's admin revoked its access (``AccessRevocation``, read from
/// the 401 every request then gets). At that contact — a push, a pull, a sync, by hand or automatic — it:
///
/// 1. saves ``RevokedAccess`` (phase ``RevokedAccess/Phase/depositing``): from then on local changes
///    are refused (``SyncError/readOnly(_:)``);
/// 2. deposits every queued operation in the service's escrow (`POST /devices/{id}/escrow`, in
///    batches; the service holds each once, so a deposit sent again after a lost answer or a power
///    cut changes nothing);
/// 3. once the service holds them all, in one transaction: removes the queue and, when the admin
///    asked for a wipe, every row of the synced tables and their delta tokens, keeping the receipt
///    (the purged ids) to send; otherwise keeps the rows, read-only;
/// 4. sends the receipt (`POST /devices/{id}/wipe-receipt`) until the service takes it.
///
/// A power cut anywhere leaves the store as it was with its queue, or in escrow and wiped (or
/// read-only): never wiped with a change lost. A sync that succeeds again (access restored) ends
/// the read-only state.
struct RevocationSettlement: Sendable {
    let store: LocalStore
    let queue: SyncOperationQueue
    /// The service the deposits and the receipt go to.
    let remote: Remote

    /// What this store did about the revocation of its access; nil when its access is not revoked.
    func saved() throws(SyncError) -> RevokedAccess? {
        try store.read { [store] db in try RevokedAccess.saved(store, db) }
    }

    /// What a job's end says of this store's access, settled once its last sync is kept and before
    /// anyone hears of the end: a job the service refused because the access was revoked settles
    /// the revocation (escrow, then wipe or read-only); a pull or sync that ran to its end ends a
    /// read-only state (access restored: a push of nothing asks the service nothing). A step that
    /// fails ends the job with its error instead.
    func settle(after job: SyncJob, _ ending: JobEnding) async -> JobEnding {
        do throws(SyncError) {
            switch (job, ending) {
            case (_, .stopped(_, SyncError.stopped(.accessRevoked(let revoked)))): try await settle(revoked)
            case (.pull, .finished), (.sync, .finished): try await forget()
            default: break
            }
            return ending
        } catch {
            return ending.stopped(by: error)
        }
    }

    /// Takes the steps `revocation` asks for, from where a previous contact (or a power cut) left them.
    func settle(_ revocation: AccessRevocation) async throws(SyncError) {
        guard let transport = remote.transport else { throw .noRemote }
        var revoked = try await store.asyncWrite { [store] db in
            var revoked =
                try RevokedAccess.saved(store, db)
                ?? RevokedAccess(revocation: revocation, phase: .depositing, noticedAt: Date())
            // The admin may have revoked again, now asking for a wipe: the store follows the latest.
            if revoked.phase == .readOnly, revocation.wipe { revoked.phase = .depositing }
            revoked.revocation = revocation
            try RevokedAccess.save(revoked, store, db)
            return revoked
        }
        if revoked.phase == .depositing {
            // Saved only with the wipe below: after a power cut the count starts again from the last saved.
            revoked.escrowed += try await deposit(transport)
            revoked = try await store.asyncWrite { [store, queue, tables = try store.syncedTables(), revoked] db in
                var done = revoked
                // Whatever was queued is in escrow: the queue goes, whatever the admin asked.
                let queued = try queue.count(db)
                try queue.removeAll(db)
                var purged: [String: [String]] = [:]
                if revocation.wipe {
                    for table in tables where store.catalog.entry(table, for: db) != nil {
                        purged[table] = try String.fetchAll(db, sql: "SELECT id FROM \(table.quotedSQLName)")
                        try db.execute(sql: "DELETE FROM \(table.quotedSQLName)")
                        try store.removeDeltaTokens(db, table: table)
                    }
                    done.phase = .wiped
                    done.receipt = WipeReceipt(
                        wipedAt: ProtocolDate.format(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)),
                        purged: purged, escrowed: done.escrowed)
                } else {
                    done.phase = .readOnly
                }
                for table in tables {
                    try queue.history.recordTableEvent(
                        db, .accessRevoked, table: table,
                        detail: "access of \(revocation.whom) revoked; \(queued) queued changes in the service's escrow"
                            + (revocation.wipe
                                ? ", \(purged[table]?.count ?? 0) rows removed" : ", rows kept read-only"))
                }
                try RevokedAccess.save(done, store, db)
                return done
            }
        }
        if revoked.phase == .wiped, !revoked.receiptSent, let receipt = revoked.receipt {
            let reply = try await transport.send(
                .post, "/devices/\(remote.installationID)/wipe-receipt", body: try Self.json(receipt), for: .wipeReceipt
            )
            guard reply.status.kind == .successful else { return }
            try await store.asyncWrite { [store] db in
                guard var saved = try RevokedAccess.saved(store, db) else { return }
                saved.receiptSent = true
                try RevokedAccess.save(saved, store, db)
            }
        }
    }

    /// Deposits every queued operation, a batch at a time; returns how many the service holds.
    private func deposit(_ transport: HTTPTransport) async throws(SyncError) -> Int {
        let operations = try await store.asyncRead { [queue] db in try queue.escrowOperations(db) }
        var batch = 0
        var remaining = operations[...]
        while !remaining.isEmpty {
            // A batch within the service's limits: a number of operations, and a body size.
            var count = min(remaining.count, EscrowDeposit.maximumOperations)
            var body = try Self.json(EscrowDeposit(operations: Array(remaining.prefix(count))))
            while body.count > EscrowDeposit.maximumBytes / 2, count > 1 {
                count /= 2
                body = try Self.json(EscrowDeposit(operations: Array(remaining.prefix(count))))
            }
            batch += 1
            let reply = try await transport.send(
                .post, "/devices/\(remote.installationID)/escrow", body: body, for: .escrow(page: batch))
            guard reply.status == .ok,
                let answer = try? JSONDecoder().decode(EscrowDepositAnswer.self, from: reply.body),
                answer.held + answer.alreadyHeld == count
            else {
                throw .badResponse(
                    "The service did not take the deposit of unsynced changes in its escrow (HTTP \(reply.status.code)): "
                        + "they stay queued here, and go to escrow at the next contact.")
            }
            remaining = remaining.dropFirst(count)
        }
        return operations.count
    }

    /// Ends the read-only state once the service answers again (access restored).
    func forget() async throws(SyncError) {
        guard try saved() != nil else { return }
        try await store.asyncWrite { [store] db in try RevokedAccess.save(nil, store, db) }
    }

    private static func json(_ value: some Encodable) throws(SyncError) -> Data {
        do { return try JSONEncoder().encode(value) } catch {
            throw .badResponse("could not encode \(value): \(error)")
        }
    }
}
