import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol

/// `GET /tables/{table}/$changes`: tells a client when a row it may see was written past its cursor,
/// so that it pulls then instead of polling. Events name the table and the new cursor, never rows:
/// the client pulls as always, so paging, filters, soft delete and per-user rules stay in one place.
///
/// - Without `cursor`: the table's cursor now, at once (`200 {"table", "cursor"}`).
/// - With `cursor`: a long poll, answered as soon as a commit it may see lands past the cursor
///   (`200` with the new cursor), or `204` after `timeout` seconds (default 30, at most 120).
/// - With `Accept: text/event-stream`: the same as Server-Sent Events, an event a commit (its id is
///   the new cursor), resumed from `Last-Event-ID` or `cursor`, a heartbeat every 15 s.
///
/// It sits behind the same checks as every table route (key, sign-in, Host, Origin) and gives what
/// the table route gives for a table the caller may not read.
extension TableController {
    static let changesSegment = "$changes"
    static let defaultWait = 30
    static let longestWait = 120

    /// Adds the channel to the `/tables` group.
    func addChangeChannel(to tables: inout Router) {
        let path = "/:table/\(Self.changesSegment)"
        route(.get, path, &tables) { (request, _, scope) async throws(TableError) in
            try await self.changes(request, scope)
        }
        // Not the item's methods: the channel is read only.
        tables.options(path) { request in self.cors.preflight(request, allow: "GET,HEAD") }
    }

    private func changes(_ request: Request, _ scope: RowScope) async throws(TableError) -> Response {
        let table = try tableName(request)
        // A table no one has written to yet is an empty one: its first row wakes the subscribers.
        let head = try await store.latestChange(in: table, scope: .all) ?? .start
        let streaming = request.headers[.accept]?.contains("text/event-stream") == true
        let read = { (text: String) throws(TableError) in try Self.cursor(text, head: head) }
        // Last-Event-ID resumes a stream only, and is checked whether or not the answer is one.
        let lastEventID = try request.headers[HTTPField.Name("Last-Event-ID")!].map(read)
        let after = try request.query("cursor").map(read) ?? (streaming ? lastEventID : nil)
        // Checked whether or not the answer waits: a malformed timeout is an error either way.
        let wait = try Self.wait(request)
        let feed = store.changes
        if let device = request.headers[ProtocolHeader.installationID], let from = after ?? lastEventID {
            let visible = try await store.latestChange(in: table, scope: scope) ?? .start
            fleet.notePull(device, table: table, from: PullPosition(cursor: from), rowsPast: visible > from ? 1 : 0)
        }
        if streaming {
            guard let subscription = feed.subscribe(table: table, owner: scope.owner, after: after ?? .start) else {
                throw .tooManySubscribers(feed.limit)
            }
            let visible = try await store.latestChange(in: table, scope: scope) ?? .start
            let latest = latest(in: table, scope: scope)
            return .eventStream { stream in
                await Self.send(
                    subscription, table: table, visible: visible, after: after ?? .start, to: stream, latest: latest)
            }
        }
        guard let after else {
            return Self.answer(table: table, cursor: try await store.latestChange(in: table, scope: scope) ?? .start)
        }
        // Subscribed before the table is read, so that a commit in between still wakes it.
        guard let subscription = feed.subscribe(table: table, owner: scope.owner, after: after) else {
            throw .tooManySubscribers(feed.limit)
        }
        let visible = try await store.latestChange(in: table, scope: scope) ?? .start
        if visible > after { return Self.answer(table: table, cursor: visible) }
        let newer = await Self.firstNewer(
            in: subscription, after: after, within: wait, on: configuration.timers,
            latest: latest(in: table, scope: scope))
        guard let newer else { return Response(status: .noContent) }
        return Self.answer(table: table, cursor: newer)
    }

    /// The newest change of `table` that `scope` may see, read when asked.
    private func latest(in table: String, scope: RowScope) -> @Sendable () async -> ChangeCursor? {
        let store = self.store
        return { try? await store.latestChange(in: table, scope: scope) }
    }

    /// The change a wake-up tells of when it is past `last`. A wake-up at or before it (every
    /// subscriber is woken so when its instance starts listening to the other instances' writes, and
    /// may have missed one) reads the table instead: its newest change if that is past `last`.
    private static func change(
        wokenAt cursor: ChangeCursor, past last: ChangeCursor, latest: @Sendable () async -> ChangeCursor?
    ) async -> ChangeCursor? {
        let newest = cursor > last ? cursor : await latest() ?? last
        return newest > last ? newest : nil
    }

    /// A stream's events: at once if the caller is behind, then one per newer change it is woken
    /// for, until the stream closes (reader gone, server stopping) or the feed does.
    private static func send(
        _ subscription: AsyncStream<ChangeCursor>, table: String, visible: ChangeCursor, after: ChangeCursor,
        to stream: EventStream, latest: @escaping @Sendable () async -> ChangeCursor?
    ) async {
        if visible > after, !stream.send(event(table: table, cursor: visible)) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var last = max(visible, after)
                for await cursor in subscription {
                    guard let newer = await change(wokenAt: cursor, past: last, latest: latest) else { continue }
                    last = newer
                    if !stream.send(event(table: table, cursor: newer)) { return }
                }
                // The feed closed: the service is stopping.
                stream.finish(retryAfter: .seconds(2))
            }
            group.addTask { await stream.closed() }
            await group.next()
            group.cancelAll()
        }
    }

    private static func event(table: String, cursor: ChangeCursor) -> ServerSentEvent {
        ServerSentEvent(id: cursor.text, event: "change", data: body(table: table, cursor: cursor))
    }

    private static func answer(table: String, cursor: ChangeCursor) -> Response {
        .json(data: Data(body(table: table, cursor: cursor).utf8))
    }

    private static func body(table: String, cursor: ChangeCursor) -> String {
        JSONValue.object(["table": .string(table), "cursor": .string(cursor.text)]).jsonText
    }

    /// The first change past `after` the subscription is woken for within `seconds`; nil when none
    /// came (or the feed closed).
    private static func firstNewer(
        in subscription: AsyncStream<ChangeCursor>, after: ChangeCursor, within seconds: Int,
        on timers: any Clock<Duration>, latest: @escaping @Sendable () async -> ChangeCursor?
    ) async -> ChangeCursor? {
        await withTaskGroup(of: ChangeCursor?.self) { group in
            group.addTask {
                for await cursor in subscription {
                    if let newer = await change(wokenAt: cursor, past: after, latest: latest) { return newer }
                }
                return nil
            }
            group.addTask {
                try? await timers.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// A cursor the caller sent: well formed, and not past the table's newest row (a cursor from
    /// another table, service or database: the client must start again from its pull).
    private static func cursor(_ text: String, head: ChangeCursor) throws(TableError) -> ChangeCursor {
        guard let cursor = ChangeCursor(text: text) else {
            throw .invalidQuery(
                "'\(text)' is not a change cursor; send the cursor of an earlier answer or event, or none to get the current one."
            )
        }
        guard cursor <= head else {
            throw .invalidQuery(
                "The cursor '\(text)' is past this table's newest change: it comes from another table or service. "
                    + "Subscribe without a cursor, pull, and use the cursor you are given.")
        }
        return cursor
    }

    private static func wait(_ request: Request) throws(TableError) -> Int {
        guard let text = request.query("timeout") else { return defaultWait }
        guard let seconds = Int(text), (0...longestWait).contains(seconds) else {
            throw .invalidQuery("timeout must be a number of seconds from 0 to \(longestWait); '\(text)' is not.")
        }
        return seconds
    }
}
