import Foundation
import SyncProtocol

extension HTTPTransport {
    /// Reads every row of `table` on the service, deleted ones included, in pages of `pageSize`
    /// ordered by id — by keyset on `id`, trusting no delta token: what verify and a reconcile read —
    /// each page decoded as a pull decodes its own, and hands the pages to `body` in order with the
    /// ids of their rows. As in a pull, the next page is on the wire while `body` works on one: one
    /// page on the wire at a time, at most two in memory. The reading ends at a page with no rows
    /// (or none with an id).
    ///
    /// - Parameters:
    ///   - layout: how a page is decoded, asked for each page (the pages before may have added columns).
    ///   - counting: the first page asks for the service's total as well (given to `body` with it).
    ///   - purpose: what page `n`'s exchange is for, as the recorder keeps it.
    /// - Throws: what a page answer stops on (``HTTPReply/checkPage(table:)``), ``SyncError/badResponse(_:)``
    ///   for an answer that is not a page, ``ServiceFault/repeatedPages(table:)`` when the service
    ///   sends rows it sent before (it ignores the filter: the reading would never end), and what
    ///   `body` throws.
    func readRowsById(
        _ table: String, layout: () -> PageLayout, pageSize: Int, counting: Bool,
        purpose: (_ page: Int) -> ExchangePurpose,
        _ body: (_ rows: [PulledRow], _ ids: [String], _ total: Int?) async throws -> Void
    ) async throws {
        var reply = try await pageById(table, after: nil, pageSize: pageSize, counting: counting, for: purpose(1))
        var previous: Set<String> = []
        var page = 1
        while true {
            try Task.checkCancellation()
            let (rows, total) = try layout().decode(reply.body)
            guard !rows.isEmpty else { return }
            let ids = rows.compactMap(\.id)
            // A service that ignores the filter sends the same rows again: it would never end.
            if ids.contains(where: { previous.contains($0) }) {
                throw SyncError.serviceFault(.repeatedPages(table: table))
            }
            guard let last = ids.last else {
                try await body(rows, ids, total)
                return
            }
            page += 1
            let nextPurpose = purpose(page)
            async let next = pageById(table, after: last, pageSize: pageSize, counting: false, for: nextPurpose)
            try await body(rows, ids, total)
            reply = try await next
            previous = Set(ids)
        }
    }

    /// One page of ``readRowsById(_:layout:pageSize:counting:purpose:_:)``: the rows after id
    /// `after` (nil: from the first).
    private func pageById(
        _ table: String, after: String?, pageSize: Int, counting: Bool, for purpose: ExchangePurpose
    ) async throws(SyncError) -> HTTPReply {
        var query: [(String, String)] = [
            ("$orderby", "id"), ("$top", String(pageSize)), (tableProtocol.includeDeletedParameter, "true"),
        ]
        if let after { query.append(("$filter", "id gt \(TableQuery.odataString(after))")) }
        if counting { query.append(tableProtocol.countParameter) }
        let reply = try await send(.get, path(table: table), query: query, for: purpose)
        try reply.checkPage(table: table)
        return reply
    }
}
