import Foundation
import HTTPServer
import SyncClient

/// Keeps an open page in step with the store: its script's `EventSource` gets the page's
/// fragments after every committed change to the store, whoever made it (a pull, a push, another
/// tab, auto-sync).
///
/// Each stream renders the fragments once when it opens and sends them all (the page may have
/// been rendered a moment before a change), then, on every change, renders them again and sends
/// those whose HTML changed, as one `fragments` event whose id is the store's revision:
///
/// ```
/// id: 42
/// event: fragments
/// data: {"revision":42,"fragments":["<div id=\"live-list\" data-live-fragment>…</div>"]}
/// ```
///
/// A burst of changes is rendered once: a stream renders at most once per ``minimumGap``. What the
/// header says without a change to the store (auto-sync's state, offline mode, Live or Polling) is
/// looked at every ``headerRefresh`` and sent when it differs. A page
/// whose row is gone (deleted, purged) gets one `missing` event with the page's 404 message. While
/// nothing changes a stream only waits (no thread is held), and it ends when the page goes away.
struct LiveUpdates: Sendable {
    let context: SyncContext
    /// The header's counts as they are now (see ``PageRenderer/headerCounts()``).
    let header: @Sendable () -> LiveFragment
    /// The least time between two renders of one stream.
    var minimumGap: Duration = .milliseconds(50)
    /// How often the header is looked at while the store does not change.
    var headerRefresh: Duration = .seconds(1)
    /// The pages following the store now.
    let following = FollowingPages()

    /// The stream of a page whose fragments `render` gives. An error of the first render (a 404)
    /// answers the request instead, as the page itself would.
    func stream(_ render: @escaping @Sendable () throws -> [LiveFragment]) throws -> Response {
        let revision = context.storeRevision
        let first = try render()
        return .eventStream { events in
            await following.counting { await follow(events, from: revision, first: first, render: render) }
        }
    }

    private func follow(
        _ events: EventStream, from revision: UInt64, first: [LiveFragment],
        render: @escaping @Sendable () throws -> [LiveFragment]
    ) async {
        var sent = SentFragments()
        guard events.send(Self.event(sent.changes(first), revision: revision)) else { return }
        // Changes wake the loop; while it renders, any number of them leave one wake-up behind.
        let (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let changes = context.storeChanges()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { wake.yield() }
                wake.finish()
            }
            group.addTask {
                await events.closed()
                wake.finish()
            }
            group.addTask { [headerRefresh] in
                while (try? await Task.sleep(for: headerRefresh)) != nil { wake.yield() }
            }
            if context.storeRevision != revision { wake.yield() }
            var rendered = revision
            var renderedAt = ContinuousClock.now - minimumGap
            var missing = false
            for await _ in wakeUps {
                try? await Task.sleep(until: renderedAt + minimumGap)
                let now = context.storeRevision
                var event: ServerSentEvent?
                guard now != rendered else {
                    let changed = sent.changes([header()])
                    if !changed.isEmpty, !events.send(Self.event(changed, revision: now)) { break }
                    continue
                }
                (rendered, renderedAt) = (now, .now)
                do {
                    let changed = sent.changes(try render())
                    missing = false
                    if !changed.isEmpty { event = Self.event(changed, revision: now) }
                } catch let error as any HTTPResponseError where error.status == .notFound {
                    if !missing { event = Self.missing(error, revision: now) }
                    missing = true
                } catch {
                    // A store that could not be read this time: the next change renders again.
                }
                if let event, !events.send(event) { break }
            }
            events.finish()
            group.cancelAll()
        }
    }

    /// The `fragments` event: the revision they show and their HTML.
    static func event(_ fragments: [LiveFragment], revision: UInt64) -> ServerSentEvent {
        struct Body: Encodable {
            var revision: UInt64
            var fragments: [String]
        }
        let body = Body(revision: revision, fragments: fragments.map(\.html))
        return ServerSentEvent(id: String(revision), event: "fragments", data: Self.json(body))
    }

    /// The `missing` event: what the page would answer now, such as "There is no todo with the id …".
    static func missing(_ error: any HTTPResponseError, revision: UInt64) -> ServerSentEvent {
        ServerSentEvent(id: String(revision), event: "missing", data: Self.json(["message": error.message]))
    }

    private static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        // Strings and numbers always encode.
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
    }
}
