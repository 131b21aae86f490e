import Foundation
import SyncProtocol
import Synchronization
import TestSupport

/// The official Mobile Apps Node.js server (azure-mobile-apps 4.0.1, soft delete on) as the
/// captures in `shared/spec/reference-server/` show it, for the requests the protocol doctor makes:
/// v2 only (3.0.0 is a 400), bare array pages (`{results, count}` with `$inlinecount`), a 409 that
/// echoes the client's item, DELETE 200 with the deleted item, a soft-deleted row 404 by id, and
/// `updatedAt` with milliseconds that several rows may share.
final class OfficialServerEmulation: Sendable {
    private struct Row {
        var item: Item
        var order: Int
    }
    private let rows = Mutex<[String: Row]>([:])
    private let clock = Mutex(0)

    func answer(_ request: MisbehavingService.Request) -> MisbehavingService.Behaviour {
        guard request.headers["zumo-api-version"]?.hasPrefix("2.") == true else {
            return .json(400, #"{"error":"An invalid API version was specified"}"#)
        }
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count >= 2, parts[0] == "tables", parts[1] == "todoitem" else {
            return .json(404, #"{"error":"The table does not exist"}"#)
        }
        let id = parts.count > 2 ? parts[2].removingPercentEncoding : nil
        let body = (try? JSONDecoder().decode(Item.self, from: request.body)) ?? [:]
        let ifMatch = request.headers["if-match"]?.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        switch (request.method, id) {
        case ("GET", nil): return list(request.query)
        case ("GET", let id?):
            guard let row = rows.withLock({ $0[id] }), row.item["deleted"]?.boolValue != true else {
                return Self.missing
            }
            return Self.json(200, .object(row.item))
        case ("POST", nil):
            let id = body["id"]?.stringValue ?? UUID().uuidString
            if rows.withLock({ $0[id] }) != nil { return Self.json(409, .object(body)) }  // the client's item, echoed
            var item = body
            item["id"] = .string(id)
            item["version"] = .string(Self.version(1))
            item["createdAt"] = .string(stamp())
            item["updatedAt"] = item["createdAt"]
            item["deleted"] = .bool(false)
            let stored = item
            rows.withLock { $0[id] = Row(item: stored, order: $0.count) }
            return Self.json(201, .object(item))
        case ("PATCH", let id?), ("DELETE", let id?):
            guard var row = rows.withLock({ $0[id] }), row.item["deleted"]?.boolValue != true else {
                return Self.missing
            }
            if let ifMatch, ifMatch != row.item["version"]?.stringValue { return Self.json(412, .object(row.item)) }
            if request.method == "PATCH" {
                for (key, value) in body where key != "id" { row.item[key] = value }
            } else {
                row.item["deleted"] = .bool(true)
            }
            let current = Data(base64Encoded: row.item["version"]?.stringValue ?? "") ?? Data()
            row.item["version"] = .string(Self.version((Int(String(decoding: current, as: UTF8.self)) ?? 0) + 1))
            row.item["updatedAt"] = .string(stamp())
            let changed = row
            rows.withLock { $0[id] = changed }
            return Self.json(200, .object(changed.item))
        default:
            return .json(405, "{}")
        }
    }

    private func list(_ query: [String: String]) -> MisbehavingService.Behaviour {
        let filter = query["$filter"] ?? ""
        let includeDeleted = !(query["__includeDeleted"] ?? "").isEmpty
        var matching = rows.withLock { Array($0.values) }.filter { row in
            (includeDeleted || row.item["deleted"]?.boolValue != true) && Self.matches(filter, row.item)
        }
        matching.sort {
            query["$orderby"] == "updatedAt"
                ? ($0.item["updatedAt"]?.stringValue ?? "", $0.order) < (
                    $1.item["updatedAt"]?.stringValue ?? "", $1.order
                )
                : $0.order < $1.order
        }
        let count = matching.count
        let page = Array(matching.dropFirst(Int(query["$skip"] ?? "") ?? 0).prefix(Int(query["$top"] ?? "") ?? 50))
            .map { JSONValue.object($0.item) }
        return query["$inlinecount"] == "allpages"
            ? Self.json(200, .object(["results": .array(page), "count": .number(Double(count))]))
            : Self.json(200, .array(page))
    }

    /// The three filters the doctor sends: `startswith(id,'P')`, `id eq 'X'`, and
    /// `(id eq 'X') and (updatedAt eq datetimeoffset'T')`.
    private static func matches(_ filter: String, _ item: Item) -> Bool {
        if filter.isEmpty { return true }
        let quoted = filter.split(separator: "'", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
        let id = item["id"]?.stringValue ?? ""
        if filter.hasPrefix("startswith(id,") { return id.hasPrefix(quoted[0]) }
        if filter.contains("updatedAt eq") { return id == quoted[0] && item["updatedAt"]?.stringValue == quoted[1] }
        return id == quoted[0]
    }

    /// Milliseconds of a clock that advances by one every third call: rows share milliseconds.
    private func stamp() -> String {
        let tick = clock.withLock { tick in
            tick += 1
            return tick / 3
        }
        let base = Date(timeIntervalSince1970: 1_795_000_000 + Double(tick) / 1000)
        var format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        format.timeZone = .gmt
        return base.formatted(format)
    }

    private static func version(_ number: Int) -> String { Data(String(number).utf8).base64EncodedString() }

    private static let missing = MisbehavingService.Behaviour.json(404, #"{"error":"The item does not exist"}"#)

    private static func json(_ status: Int, _ value: JSONValue) -> MisbehavingService.Behaviour {
        let data = (try? JSONEncoder().encode(value)) ?? Data()
        return .json(status, String(decoding: data, as: UTF8.self))
    }
}
