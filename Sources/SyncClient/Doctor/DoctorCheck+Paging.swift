import Foundation
import SyncProtocol

extension DoctorCheck {
    /// Probe rows written for the paging check (more than a page of ``pageRows``).
    static let pagingRows = 5
    /// Rows asked per page in v2 (`$top`), so that the probe rows span several pages.
    static let pageRows = 2
    /// Pages read at most: a service still sending full pages after them does not end its paging.
    static let maximumPages = 8

    /// Paging form and termination: v2 `$skip`/`$top` until a short page, v3 `nextLink` until it is
    /// null; every row once, and an end.
    static let paging = DoctorCheck(
        name: "paging",
        asks: "Do pages come in the protocol's form, each row once, and does the paging end (rows sharing one "
            + "millisecond of updatedAt included)?",
        writes: false,
        probe: { session throws(SyncError) in
            var exchanges: [RecordedExchange] = []
            if !session.isReadOnly {
                for index in 1...pagingRows { exchanges.append(try await session.insert("page-\(index)")) }
            }
            let pages = session.isReadOnly ? 4 : maximumPages
            var query: [(String, String)] = [("$orderby", "updatedAt")]
            if !session.isReadOnly {
                query = [("$filter", session.probeRowsFilter())] + query + [session.dialect.countParameter]
            }
            switch session.dialect {
            case .v2:
                for page in 0..<pages {
                    let answer = try await session.send(
                        .get, query: query + [("$top", "\(pageRows)"), ("$skip", "\(page * pageRows)")])
                    exchanges.append(answer)
                    guard let rows = answer.rows(.v2), rows.count == pageRows else { break }
                }
            case .v3:
                for _ in 0..<pages {
                    let answer = try await session.send(.get, query: query)
                    exchanges.append(answer)
                    guard let next = answer.item?["nextLink"]?.stringValue, !next.isEmpty,
                        let items = URLComponents(string: "?" + next)?.queryItems
                    else { break }
                    query = items.map { ($0.name, $0.value ?? "") }
                }
            }
            return exchanges
        },
        judge: { dialect, exchanges in
            let inserts = exchanges.filter { $0.method == "POST" }
            let pages = exchanges.filter { $0.method == "GET" }
            let readOnly = inserts.isEmpty
            guard let first = pages.first else { return .failed("No page was asked.") }
            var seen: Set<String> = []
            var sent: [String] = []
            for page in pages {
                guard page.status == 200, let ids = Optional(page.rowIds(dialect)), page.rows(dialect) != nil else {
                    return .failed(
                        "A page was answered with \(page.answerLine), not a \(dialect == .v2 ? "JSON array or {results, count}" : "{items, count, nextLink}") page."
                    )
                }
                for id in ids where !seen.insert(id).inserted {
                    return .failed(
                        "Row '\(id)' came again on a later page: the service repeats its pages, so a pull would never "
                            + "end or would count rows twice.")
                }
                sent += ids
            }
            let last = pages[pages.count - 1]
            let ended: Bool
            switch dialect {
            case .v2: ended = (last.rows(.v2)?.count ?? 0) < pageRows
            case .v3: ended = (last.item?["nextLink"]?.stringValue ?? "").isEmpty
            }
            if readOnly {
                return .passed(
                    "\(pages.count) page(s), \(sent.count) row(s), none twice"
                        + (ended ? ", and the paging ended." : " (the table is larger; reading stopped there)."))
            }
            guard ended else {
                return .failed(
                    "After \(pages.count) pages the service still announced more, for \(pagingRows) rows: its paging "
                        + "does not end.")
            }
            let probeIds = inserts.compactMap { $0.item?["id"]?.stringValue }
            let missing = probeIds.filter { !seen.contains($0) }
            guard missing.isEmpty, sent.count == probeIds.count else {
                return .failed(
                    "Paging the \(probeIds.count) probe rows brought \(sent.count) row(s); missing: "
                        + missing.joined(separator: ", ") + ".")
            }
            let stamps = Dictionary(grouping: inserts.compactMap { $0.item?["updatedAt"]?.stringValue }, by: { $0 })
            let shared = stamps.values.map(\.count).max() ?? 0
            var form = dialect == .v2 ? "at most \(pageRows) rows each by $skip/$top" : "followed by nextLink"
            if dialect == .v3, let count = first.item?["count"]?.numberValue { form += ", count \(Int(count))" }
            return .passed(
                "\(probeIds.count) rows came once each in \(pages.count) page(s): \(form); the paging ended"
                    + (shared > 1 ? "; \(shared) of them shared one millisecond of updatedAt." : "."))
        })
}
