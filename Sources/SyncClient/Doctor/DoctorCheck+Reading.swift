import Foundation
import SyncProtocol

extension DoctorCheck {
    /// Which protocols and versions the endpoint answers: a first page asked in v2 and in v3.
    static let speaks = DoctorCheck(
        name: "protocol", asks: "Which protocol versions does the table answer (a first page in v2 and in v3)?",
        writes: false,
        probe: { session throws(SyncError) in
            var exchanges: [RecordedExchange] = []
            for dialect in TableProtocol.allCases {
                exchanges.append(
                    try await session.send(.get, query: [("$top", "1")], apiVersion: dialect.apiVersion))
            }
            return exchanges
        },
        judge: { dialect, exchanges in
            let spoken = TableProtocol.allCases.enumerated().filter { index, version in
                index < exchanges.count && exchanges[index].status == 200 && exchanges[index].rows(version) != nil
            }.map(\.element)
            let server = exchanges.lazy.flatMap(\.responseHeaderLines).first {
                $0.lowercased().hasPrefix("x-zumo-server-version:")
            }
            let speaks = spoken.isEmpty ? "no protocol version" : spoken.map(\.label).joined(separator: " and ")
            let detail = "It speaks \(speaks)" + (server.map { " (\($0))" } ?? "") + "."
            guard spoken.contains(dialect) else {
                let status = exchanges.first { $0.target.contains("$top") && $0.status != 200 }?.status
                return .failed(
                    detail + " It does not answer a \(dialect.label) page"
                        + (status.map { " (HTTP \($0))" } ?? "") + ": check the URL, the table name and the key.")
            }
            return .passed(detail + " Checking \(dialect.label).")
        })

    /// `$filter` honoured: a filter on an id matches that row only (read-only: an id that does not exist
    /// matches nothing).
    static let filter = DoctorCheck(
        name: "filter", asks: "Does $filter select only the rows asked for?", writes: false,
        probe: { session throws(SyncError) in
            if session.isReadOnly {
                return [try await session.send(.get, query: [("$filter", "id eq '\(session.prefix)absent'")])]
            }
            let first = try await session.insert("filter-a")
            let second = try await session.insert("filter-b")
            let page = try await session.send(.get, query: [("$filter", "id eq '\(session.prefix)filter-a'")])
            return [first, second, page]
        },
        judge: { dialect, exchanges in
            guard let page = exchanges.last, let rows = page.rows(dialect) else {
                return .failed("The filtered query was not answered with a page (\(exchanges.last?.answerLine ?? "")).")
            }
            let wanted = exchanges.count > 1 ? exchanges[0].item?["id"]?.stringValue : nil
            let ids = rows.compactMap { $0["id"]?.stringValue }
            let expected = wanted.map { [$0] } ?? []
            guard ids == expected else {
                return .failed(
                    "Asked for id eq '\(wanted ?? "an id that does not exist")', it sent \(ids.count) row(s): "
                        + ids.prefix(5).joined(separator: ", ")
                        + ". It ignores $filter: a pull would take rows it did not ask for.")
            }
            return .passed("A filter on id matched \(expected.isEmpty ? "no row, as asked" : "exactly that row").")
        })

    /// An answer about the item asked: GET by id returns that item (read-only: a row of the first page).
    static let readOne = DoctorCheck(
        name: "item", asks: "Does GET /tables/T/{id} answer about the item asked?", writes: false,
        probe: { session throws(SyncError) in
            if session.isReadOnly {
                let id = session.sample?["id"]?.stringValue ?? session.prefix + "absent"
                return [try await session.send(.get, id: id)]
            }
            let inserted = try await session.insert("item")
            return [inserted, try await session.send(.get, id: session.prefix + "item")]
        },
        judge: { dialect, exchanges in
            guard let read = exchanges.last, let asked = read.target.split(separator: "?")[0].split(separator: "/").last
            else { return .failed("Nothing was asked.") }
            let id = asked.removingPercentEncoding ?? String(asked)
            if exchanges.count > 1, let sent = exchanges[0].item?["id"]?.stringValue,
                sent != id || exchanges[0].status != 201
            {
                return .failed("The insert of '\(id)' was answered with \(exchanges[0].answerLine) about '\(sent)'.")
            }
            if exchanges.count == 1, id.hasSuffix("absent") {
                return read.status == 404
                    ? .passed("The table is empty; an id that does not exist is 404.")
                    : .failed("An id that does not exist was answered with \(read.answerLine), not 404.")
            }
            guard read.status == 200, let received = read.item?["id"]?.stringValue else {
                return .failed("GET of '\(id)' was answered with \(read.answerLine), not the item.")
            }
            guard received == id else {
                return .failed(
                    "GET of '\(id)' was answered about another item, '\(received)': a client would store the wrong row."
                )
            }
            let tag = read.responseHeaderLines.first { $0.lowercased().hasPrefix("etag:") }
            return .passed(
                "GET of '\(id)' answered that item" + (tag.map { ", with \($0)" } ?? ", without an ETag") + ".")
        })

    /// `updatedAt` comes with milliseconds and a filter on that exact value finds the row again.
    static let timestamps = DoctorCheck(
        name: "timestamps",
        asks: "Does updatedAt keep milliseconds, and does a filter on its exact value find the row?",
        writes: false,
        probe: { session throws(SyncError) in
            var exchanges: [RecordedExchange] = []
            let row: Item?
            if session.isReadOnly {
                row = session.sample
            } else {
                let inserted = try await session.insert("time")
                exchanges.append(inserted)
                row = inserted.item
            }
            guard let id = row?["id"]?.stringValue, let stamp = row?["updatedAt"]?.stringValue else { return exchanges }
            let filter = "(id eq '\(id)') and (updatedAt eq \(session.dialect.instant(stamp)))"
            exchanges.append(try await session.send(.get, query: [("$filter", filter)]))
            return exchanges
        },
        judge: { dialect, exchanges in
            guard let page = exchanges.last, page.method == "GET" else {
                return exchanges.isEmpty
                    ? .skipped("The table has no row to read a timestamp from.")
                    : .failed("The inserted row came back without updatedAt (\(exchanges[0].answerLine)).")
            }
            let filter = page.target.removingPercentEncoding ?? page.target
            let literal = filter.components(separatedBy: "updatedAt eq ").last ?? ""
            let stamp = literal.replacingOccurrences(of: "datetimeoffset'", with: "")
                .replacingOccurrences(of: "cast(", with: "").prefix { $0 != "'" && $0 != "," }
            let fraction = stamp.split(separator: ".").dropFirst().first?.prefix { $0.isNumber }.count ?? 0
            guard fraction >= 3 else {
                return .failed(
                    "updatedAt \(stamp) has \(fraction) fractional digits, not milliseconds: incremental pull may "
                        + "miss or repeat rows changed within one second.")
            }
            guard page.rowIds(dialect).count == 1 else {
                return .failed(
                    "A filter on the exact updatedAt \(stamp) found \(page.rowIds(dialect).count) rows, not the row: "
                        + "the service stores another precision than it sends.")
            }
            return .passed("updatedAt \(stamp) keeps milliseconds and round-trips through $filter.")
        })
}
