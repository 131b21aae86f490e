import Foundation
import SyncProtocol

/// Prints a listing read newest first in keyset pages (the journal, the flight recorder's log):
/// up to `limit` items, as JSON Lines or as `text` each, asking `page` for the page before each cursor.
func printNewestFirst<Item: Encodable>(
    limit: Int, json: Bool, page: (_ before: Int64?) throws -> (items: [Item], next: Int64?),
    text: (Item) -> String
) throws {
    let encoder = JSONEncoder.todosync()
    var remaining = max(0, limit)
    var before: Int64?
    while remaining > 0 {
        let (items, next) = try page(before)
        for item in items.prefix(remaining) {
            print(json ? String(decoding: try encoder.encode(item), as: UTF8.self) : text(item))
        }
        remaining -= items.count
        guard let next else { return }
        before = next
    }
}
