import Foundation
import SyncProtocol

/// Performs the actions of a ``PullRun``: each fetch and each write is a child task whose result goes
/// back into the run as an event, one at a time, until the run finishes.
///
/// Writes run to their end even when the pull is cancelled (see ``LocalStore/asyncWrite(_:)``):
/// the pages received are stored, whatever stopped the pull.
struct PullRunner: Sendable {
    /// One page as it came: its rows, decoded, and what the write needs of the answer.
    struct Page: Sendable {
        /// The page's number, from 1.
        var number: Int
        /// The token the page was asked with.
        var tokenBefore: DeltaToken
        var rows: [PulledRow]
        /// The rows' `(id, updatedAt)`, for the cursor.
        var keys: [PullCursor.RowKey] { rows.map { .init(id: $0.id, updatedAt: $0.updatedAt) } }
        /// The count of rows to come, when asked for.
        var total: Int?
        /// The answer's body, decoded again when a column rename changes the table's layout.
        var body: Data
        var columnChanges: ColumnChanges
    }

    /// Asks for page `number` after `token`; `counting`: with the count of rows to come.
    let fetch: @Sendable (_ number: Int, _ token: DeltaToken, _ counting: Bool) async throws(SyncError) -> Page
    /// Writes `page` and the token after it, in one transaction.
    let write: @Sendable (_ page: Page, _ tokenAfter: DeltaToken) async throws(SyncError) -> PageCounts
    /// Told of the run after each event (progress).
    let progress: @Sendable (PullRun) -> Void

    /// Runs `run` to its end: what it did, and the error that stopped it (nil: the pull is complete).
    func run(_ run: PullRun) async -> (result: PullResult, error: SyncError?) {
        var run = run
        let error = await withTaskGroup(of: (PullRun.Event, Page?).self) { group -> SyncError? in
            var received: [Int: Page] = [:]
            var actions = run.start()
            var cancelSeen = false
            while true {
                for action in actions {
                    switch action {
                    case .fetch(let number, let token, let counting):
                        group.addTask {
                            do throws(SyncError) {
                                let page = try await fetch(number, token, counting)
                                return (.fetched(number, rows: page.keys, total: page.total), page)
                            } catch {
                                return (.fetchFailed(error), nil)
                            }
                        }
                    case .write(let number, let token):
                        guard let page = received.removeValue(forKey: number) else { continue }
                        group.addTask {
                            do throws(SyncError) {
                                return (.written(number, try await write(page, token)), nil)
                            } catch {
                                return (.writeFailed(error), nil)
                            }
                        }
                    case .cancelFetch:
                        // Writes are not interrupted by it (see above).
                        group.cancelAll()
                    case .finish(let error):
                        return error
                    }
                }
                if !cancelSeen, Task.isCancelled {
                    cancelSeen = true
                    actions = run.cancelled()
                    continue
                }
                // The run always has a child out until it finishes.
                guard let (event, page) = await group.next() else { return .stopped(.cancelled) }
                if let page { received[page.number] = page }
                actions = run.receive(event)
                progress(run)
            }
        }
        return (run.result, error)
    }
}
