import Foundation
import GRDB
import SyncProtocol

extension SyncContext {
    /// Sends the queued operations in order: inserts (POST), updates (PATCH) and deletes (DELETE),
    /// the last two with `If-Match`. Conflicts and refusals are recorded and push goes on.
    ///
    /// - Throws: ``SyncError/stopped(_:)`` when the server is unreachable, times out, fails (5xx) or
    ///   refuses access (401/403), or offline mode is on; the queue is intact and retrying is safe.
    ///   A second caller while a push runs shares its result.
    public func push() async throws -> PushResult {
        try await exclusive("push") { try await self.runPush() }
    }

    func runPush() async throws -> PushResult {
        let transport = try readyTransport(.push, table: nil)
        let queued = try read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT id, tableName, itemId FROM __operations WHERE state IN ('pending', 'attempted') ORDER BY id"
            ).map { row -> (id: Int64, item: String) in (row[0], row[1] + "\u{0}" + row[2]) }
        }
        let ids = queued.map(\.id)
        monitor.update {
            $0 = SyncProgress(activity: .pushing, table: nil, done: 0, total: ids.count, startedAt: Date())
        }
        defer { monitor.update { $0 = .idle } }
        var result = PushResult()
        do {
            if pushConcurrency <= 1 {
                for id in ids {
                    try Task.checkCancellation()
                    result.add(try await sendResolving(id, transport: transport), id)
                    monitor.update { $0.done += 1 }
                }
            } else {
                try await sendWindowed(queued, transport: transport, into: &result)
            }
        } catch {
            let reason = (error as? SyncError).flatMap { if case .stopped(let reason) = $0 { reason } else { nil } }
            recordLastSync(
                SyncSummary(
                    kind: .push, table: nil, finishedAt: Date(), pushed: result.pushed.count,
                    conflicts: result.conflicts.count, failed: result.failed.count, pulled: 0,
                    stopReason: error is CancellationError ? .cancelled : reason,
                    error: reason == nil && !(error is CancellationError) ? "\(error)" : nil))
            throw error is CancellationError ? SyncError.stopped(.cancelled) : error
        }
        recordLastSync(
            SyncSummary(
                kind: .push, table: nil, finishedAt: Date(), pushed: result.pushed.count,
                conflicts: result.conflicts.count, failed: result.failed.count, pulled: 0, stopReason: nil,
                error: nil))
        return result
    }

    /// Sends one operation; with the client-wins policy a conflict is sent again over the server's version.
    private func sendResolving(_ id: Int64, transport: HTTPTransport) async throws -> OperationOutcome {
        let outcome = try await send(operation: id, transport: transport, policy: conflictPolicy)
        if outcome == .conflict, conflictPolicy == .clientWins, (try? adoptServerVersion(id)) != nil {
            return try await send(operation: id, transport: transport, policy: .manual)
        }
        return outcome
    }

    /// Up to ``pushConcurrency`` operations on the wire at once, started in queue order; two operations
    /// of the same item never overlap. The first stop cancels the others (they stay queued, attempted).
    private func sendWindowed(
        _ queued: [(id: Int64, item: String)], transport: HTTPTransport, into result: inout PushResult
    ) async throws {
        try await withThrowingTaskGroup(of: (Int64, String, OperationOutcome).self) { group in
            var busyItems: Set<String> = []
            var running = 0
            func collect(_ group: inout ThrowingTaskGroup<(Int64, String, OperationOutcome), any Error>) async throws {
                guard let (id, item, outcome) = try await group.next() else { return }
                running -= 1
                busyItems.remove(item)
                result.add(outcome, id)
                monitor.update { $0.done += 1 }
            }
            for (id, item) in queued {
                while running >= pushConcurrency || busyItems.contains(item) { try await collect(&group) }
                try Task.checkCancellation()
                busyItems.insert(item)
                running += 1
                group.addTask { (id, item, try await self.sendResolving(id, transport: transport)) }
            }
            while running > 0 { try await collect(&group) }
        }
        // Completion order is not queue order: report in queue order.
        for keyPath in [\PushResult.pushed, \.conflicts, \.failed, \.resolved, \.skipped]
            as [WritableKeyPath<PushResult, [Int64]>]
        {
            result[keyPath: keyPath].sort()
        }
    }

    /// The transport, or the reason there is none (offline mode, no address).
    func readyTransport(_ kind: SyncSummary.Kind, table: String?) throws(SyncError) -> HTTPTransport {
        var failure: SyncError?
        if monitor.offline { failure = .stopped(.offline) } else if transport == nil { failure = .noRemote }
        if let failure {
            recordLastSync(
                SyncSummary(
                    kind: kind, table: table, finishedAt: Date(), pushed: 0, conflicts: 0, failed: 0, pulled: 0,
                    stopReason: failure == .stopped(.offline) ? .offline : nil,
                    error: failure == .noRemote ? failure.description : nil))
            throw failure
        }
        return transport!
    }

    /// What is sent for one operation, fixed when it goes in flight.
    private struct Outgoing {
        var operation: TableOperation
        var table: TableDescription
        var body: Item?
        var ifMatch: String?
        /// The bodies sent by earlier attempts, newest first (their answers may have been lost).
        var previousBodies: [Item] = []
        /// `body` as sent.
        var bodyData: Data?
    }

    /// Sends one queued operation and records its outcome. Throws only when the push must stop.
    func send(operation id: Int64, transport: HTTPTransport, policy: ConflictPolicy) async throws -> OperationOutcome {
        guard let outgoing = try prepare(id) else { return .skipped }
        let reply: HTTPReply
        do {
            reply = try await request(outgoing, transport: transport)
        } catch {
            try markAttempted(id, reason: error)
            throw SyncError.stopped(error)
        }
        return try await handle(reply, outgoing, transport: transport, policy: policy)
    }

    /// The protocol request of a prepared operation.
    private nonisolated func request(
        _ outgoing: Outgoing, transport: HTTPTransport
    ) async throws(StopReason)
        -> HTTPReply
    {
        let operation = outgoing.operation
        let path = transport.path(table: operation.table, id: operation.kind == .insert ? nil : operation.itemId)
        let method =
            switch operation.kind {
            case .insert: "POST"
            case .update: "PATCH"
            case .delete: "DELETE"
            }
        return try await transport.send(
            method, path, body: outgoing.bodyData, ifMatch: operation.kind == .insert ? nil : outgoing.ifMatch)
    }

    private func handle(
        _ reply: HTTPReply, _ outgoing: Outgoing, transport: HTTPTransport, policy: ConflictPolicy
    )
        async throws -> OperationOutcome
    {
        let operation = outgoing.operation
        let id = operation.id
        switch reply.status {
        case 200..<300:
            if try succeed(id, answer: reply.body) { return .pushed }
            var serverItem = ItemCoding.item(from: reply.body)
            if serverItem == nil, operation.kind != .delete {
                // Applied, but the answer was cut or garbled: read the item, so that the row gets the
                // server's version. If that fails too, stop; the retry recognises the change as ours.
                serverItem = try await fetchServerItem(outgoing, transport: transport)
                guard serverItem != nil else {
                    let reason = StopReason.serverError(
                        status: reply.status,
                        message: "its answer to \(operation.kind.rawValue) was not the stored item")
                    try markAttempted(id, reason: reason, status: reply.status)
                    throw SyncError.stopped(reason)
                }
            }
            try succeed(id, status: reply.status, serverItem: serverItem)
            return .pushed
        case 404 where operation.kind == .delete:
            try succeed(id, status: 404, serverItem: nil)
            return .pushed
        case 404 where operation.kind == .update:
            return try conflict(
                id, kind: .deletedOnServer, status: 404, message: "The item was deleted on the server.",
                serverItem: nil, sent: outgoing.body, policy: policy, transport: transport)
        case 409, 412:
            var serverItem = ItemCoding.item(from: reply.body)
            if serverItem == nil {
                serverItem = try await fetchServerItem(outgoing, transport: transport)
            }
            if serverItem?[SystemColumn.deleted] == .bool(true) {
                // The server's copy is soft-deleted: for us the item is gone.
                serverItem = nil
            }
            guard let serverItem else {
                if operation.kind == .delete {
                    try succeed(id, status: reply.status, serverItem: nil)
                    return .pushed
                }
                if operation.kind == .insert, operation.recreate {
                    return try await recreate(outgoing, transport: transport, policy: policy)
                }
                return try conflict(
                    id, kind: .deletedOnServer, status: reply.status,
                    message: "The item was deleted on the server.", serverItem: nil, sent: outgoing.body,
                    policy: policy, transport: transport)
            }
            if let body = outgoing.body, Self.matches(body, serverItem) {
                // The server already holds exactly what we sent (an earlier answer was lost).
                try succeed(id, status: reply.status, serverItem: serverItem)
                return .pushed
            }
            if operation.kind != .delete, outgoing.previousBodies.contains(where: { Self.matches($0, serverItem) }) {
                // Our earlier attempt arrived (its answer was lost) and the values changed since:
                // send them as an update of what that attempt stored.
                try write { [store] db in
                    guard var current = try store.operation(db, id: id) else { return }
                    if var row = try store.readItem(db, table: outgoing.table, id: current.itemId) {
                        Self.adoptSystemColumns(of: serverItem, into: &row)
                        try store.writeItem(db, table: outgoing.table, item: row)
                    }
                    current.kind = .update
                    current.state = .pending
                    current.base = serverItem
                    try store.updateOperation(db, current)
                }
                return try await send(operation: id, transport: transport, policy: policy)
            }
            if operation.kind == .delete, let snapshot = operation.item, Self.matches(snapshot, serverItem),
                operation.item?[SystemColumn.version] != serverItem[SystemColumn.version]
            {
                // The server holds the values that were deleted locally, at a newer version (our own
                // earlier update whose answer was lost): delete that version.
                try write { [store] db in
                    guard var current = try store.operation(db, id: id) else { return }
                    current.item?[SystemColumn.version] = serverItem[SystemColumn.version]
                    current.state = .pending
                    current.base = serverItem
                    try store.updateOperation(db, current)
                }
                return try await send(operation: id, transport: transport, policy: policy)
            }
            return try conflict(
                id, kind: .conflict, status: reply.status,
                message: "The item was changed on the server (HTTP \(reply.status)).", serverItem: serverItem,
                sent: outgoing.body ?? operation.item, policy: policy, transport: transport)
        case 401, 403:
            let reason = StopReason.notAuthorized(status: reply.status, message: reply.message)
            try markAttempted(id, reason: reason, status: reply.status)
            throw SyncError.stopped(reason)
        case 408:
            try markAttempted(id, reason: .timedOut, status: reply.status)
            throw SyncError.stopped(.timedOut)
        case 429, 500...:
            let reason = StopReason.serverError(status: reply.status, message: reply.message)
            try markAttempted(id, reason: reason, status: reply.status)
            throw SyncError.stopped(reason)
        default:
            try fail(id, status: reply.status, message: reply.message, sent: outgoing.body ?? operation.item)
            return .failed
        }
    }

    /// Marks the operation in flight and fixes what is sent; nil when it should not be sent now.
    private func prepare(_ id: Int64) throws(SyncError) -> Outgoing? {
        try write { [store] db -> Outgoing? in
            guard var operation = try store.operation(db, id: id),
                operation.state == .pending || operation.state == .attempted
            else { return nil }
            // An earlier change of the same item (in conflict, refused) must be settled first.
            if try store.firstOperationId(db, table: operation.table, itemId: operation.itemId) != id {
                return nil
            }
            let table = try store.description(of: operation.table)
            var outgoing = Outgoing(operation: operation, table: table, body: nil, ifMatch: nil)
            var sentText: String?
            switch operation.kind {
            case .insert, .update:
                guard let row = try store.readItem(db, table: table, id: operation.itemId) else {
                    // The row is gone without a delete (purged): nothing left to send.
                    try store.deleteOperation(db, id: id)
                    return nil
                }
                var body: Item = [:]
                for column in table.columns { body[column.name] = row[column.name] ?? .null }
                if operation.kind == .insert {
                    body[SystemColumn.id] = .string(operation.itemId)
                } else {
                    outgoing.ifMatch = row[SystemColumn.version]?.stringValue
                }
                // Remembered so that a retry recognises any earlier attempt whose answer was lost.
                outgoing.previousBodies = Self.sentBodies(operation.item)
                operation.item = Self.remembering(body, after: operation.item)
                sentText = ItemCoding.encode(operation.item)
                outgoing.body = body
                outgoing.bodyData = body.jsonData
            case .delete:
                outgoing.ifMatch = operation.item?[SystemColumn.version]?.stringValue
            }
            operation.state = .inFlight
            operation.attempts += 1
            operation.lastAttemptAt = Date()
            try db.cachedStatement(
                sql: """
                    UPDATE __operations SET state = 'inFlight', attempts = attempts + 1, lastAttemptAt = ?,
                        item = coalesce(?, item)
                    WHERE id = ?
                    """
            ).execute(arguments: [Timestamp.string(operation.lastAttemptAt!), sentText, id])
            outgoing.operation = operation
            return outgoing
        }
    }

    private func encode(_ item: Item?) -> Data {
        (item ?? [:]).jsonData
    }

    /// GET of the item, for a 409/412 whose body is not the server's item; nil when the server has none.
    /// An answer that cannot be read stops the push (it says nothing about the item).
    private func fetchServerItem(_ outgoing: Outgoing, transport: HTTPTransport) async throws -> Item? {
        let operation = outgoing.operation
        let reply: HTTPReply
        do {
            reply = try await transport.send("GET", transport.path(table: operation.table, id: operation.itemId))
        } catch {
            try markAttempted(operation.id, reason: error)
            throw SyncError.stopped(error)
        }
        switch reply.status {
        case 200:
            if let item = ItemCoding.item(from: reply.body) { return item }
            // Not "deleted on the server": the answer was unreadable. Stop; a retry asks again.
            let reason = StopReason.serverError(status: 200, message: "its answer to GET was not the stored item")
            try markAttempted(operation.id, reason: reason, status: 200)
            throw SyncError.stopped(reason)
        case 404, 410: return nil
        default:
            let reason =
                reply.status == 401 || reply.status == 403
                ? StopReason.notAuthorized(status: reply.status, message: reply.message)
                : StopReason.serverError(status: reply.status, message: reply.message)
            try markAttempted(operation.id, reason: reason, status: reply.status)
            throw SyncError.stopped(reason)
        }
    }

    /// Use Client for an item the server deleted: undelete it (`POST /tables/{table}/{id}`), then
    /// PATCH the local values onto it.
    private func recreate(
        _ outgoing: Outgoing, transport: HTTPTransport, policy: ConflictPolicy
    ) async throws
        -> OperationOutcome
    {
        let operation = outgoing.operation
        let path = transport.path(table: operation.table, id: operation.itemId)
        do {
            let undeleted = try await transport.send("POST", path, body: Data("{}".utf8))
            guard (200..<300).contains(undeleted.status), let item = ItemCoding.item(from: undeleted.body) else {
                try fail(operation.id, status: undeleted.status, message: undeleted.message, sent: outgoing.body)
                return .failed
            }
            var body = outgoing.body ?? [:]
            body[SystemColumn.id] = nil
            let reply = try await transport.send(
                "PATCH", path, body: encode(body), ifMatch: item[SystemColumn.version]?.stringValue)
            var next = outgoing
            next.operation.kind = .update
            next.operation.recreate = false
            return try await handle(reply, next, transport: transport, policy: policy)
        } catch let reason as StopReason {
            try markAttempted(operation.id, reason: reason)
            throw SyncError.stopped(reason)
        }
    }

    // MARK: Recording outcomes

    /// The server accepted the operation: its item goes into the row (unless a newer local change of
    /// the item is queued, which keeps its values and only adopts the new version), the operation leaves.
    /// The common success: no newer change of the item is queued and the answer is the stored item,
    /// decoded straight into the row's columns. False (and nothing done) when the general path is needed.
    private func succeed(_ id: Int64, answer: Data) throws(SyncError) -> Bool {
        try write { [store] db -> Bool in
            guard let operation = try store.operationHeader(db, id: id) else { return true }
            guard operation.kind != .delete else {
                try store.deleteOperation(db, id: id)
                return true
            }
            guard
                !(try store.hasOperations(db, table: operation.table, itemId: operation.itemId, after: id)),
                let layout = store.layouts[operation.table], let table = store.tables[operation.table],
                let row = layout.decodeItem(answer), row.id == operation.itemId, !row.deleted
            else { return false }
            try store.writeRow(db, table: table, values: row.values)
            try store.deleteOperation(db, id: id)
            return true
        }
    }

    private func succeed(_ id: Int64, status: Int, serverItem: Item?) throws(SyncError) {
        try write { [store] db in
            guard let operation = try store.operation(db, id: id) else { return }
            let table = try store.description(of: operation.table)
            let later = try store.operations(db, table: operation.table, itemId: operation.itemId)
                .filter { $0.id > id }
            if let serverItem, operation.kind != .delete {
                if later.isEmpty {
                    try store.writeItem(db, table: table, item: serverItem)
                } else {
                    if var row = try store.readItem(db, table: table, id: operation.itemId) {
                        Self.adoptSystemColumns(of: serverItem, into: &row)
                        try store.writeItem(db, table: table, item: row)
                    }
                    for var next in later {
                        next.base = serverItem
                        if next.kind == .delete, next.item != nil {
                            next.item?[SystemColumn.version] = serverItem[SystemColumn.version]
                        }
                        try store.updateOperation(db, next)
                    }
                }
            }
            try store.deleteOperation(db, id: id)
        }
    }

    private func conflict(
        _ id: Int64, kind: OperationErrorKind, status: Int, message: String, serverItem: Item?, sent: Item?,
        policy: ConflictPolicy, transport: HTTPTransport
    ) throws -> OperationOutcome {
        try record(
            id, state: .conflict, kind: kind, status: status, message: message, serverItem: serverItem, sent: sent)
        switch policy {
        case .manual, .clientWins:
            // Client wins is applied by the push loop's caller (it needs another request).
            return .conflict
        case .serverWins:
            try useServer(id)
            return .resolvedByServer
        }
    }

    private func fail(_ id: Int64, status: Int, message: String, sent: Item?) throws(SyncError) {
        try record(id, state: .failed, kind: .failed, status: status, message: message, serverItem: nil, sent: sent)
    }

    /// Puts an operation in `state` and saves its error row, in one transaction.
    private func record(
        _ id: Int64, state: OperationState, kind: OperationErrorKind, status: Int, message: String,
        serverItem: Item?, sent: Item?
    ) throws(SyncError) {
        try write { [store] db in
            guard var operation = try store.operation(db, id: id) else { return }
            operation.state = state
            operation.lastStatus = status
            operation.message = message
            try store.updateOperation(db, operation)
            try store.saveError(
                db,
                OperationError(
                    operationId: id, kind: kind, status: status, message: message, serverItem: serverItem,
                    clientItem: sent, recordedAt: Date()))
        }
    }

    private func markAttempted(_ id: Int64, reason: StopReason, status: Int? = nil) throws(SyncError) {
        try write { [store] db in
            guard var operation = try store.operation(db, id: id) else { return }
            operation.state = .attempted
            operation.lastStatus = status
            operation.message = reason.description
            try store.updateOperation(db, operation)
        }
    }

    static func adoptSystemColumns(of serverItem: Item, into row: inout Item) {
        for column in [SystemColumn.version, SystemColumn.createdAt, SystemColumn.updatedAt] {
            if let value = serverItem[column] { row[column] = value }
        }
    }

    /// The bodies an insert or update sent so far, newest first (kept in the operation's `item`:
    /// the last body, with earlier distinct ones under `__earlier`).
    static func sentBodies(_ item: Item?) -> [Item] {
        guard var last = item else { return [] }
        guard case .array(let values) = last.removeValue(forKey: earlierKey) else { return [last] }
        let earlier = values.compactMap(\.objectValue)
        return [last] + earlier
    }

    /// `item` after sending `body` (at most eight distinct bodies are kept).
    static func remembering(_ body: Item, after item: Item?) -> Item {
        let bodies = Array(([body] + sentBodies(item).filter { $0 != body }).prefix(8))
        var stored = bodies[0]
        if bodies.count > 1 { stored[earlierKey] = .array(bodies.dropFirst().map { .object($0) }) }
        return stored
    }

    private static let earlierKey = "__earlier"

    /// Whether the server's item holds every value we sent (`id` and system columns aside).
    static func matches(_ sent: Item, _ server: Item) -> Bool {
        for (key, value) in sent where key != SystemColumn.id && !SystemColumn.all.contains(key) && key != earlierKey {
            let other = server[key] ?? .null
            if value == other { continue }
            switch (value, other) {
            case (.bool(let flag), .number(let number)), (.number(let number), .bool(let flag)):
                if (number != 0) == flag { continue }
            default: break
            }
            return false
        }
        return true
    }
}
