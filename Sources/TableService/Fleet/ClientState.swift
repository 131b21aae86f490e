import Foundation

/// What a todosync client says of itself, which only it knows: operations queued, the age of the
/// oldest, and conflicts waiting for a person. Sent as `X-TodoSync-Client-State: queue=3, oldest=120,
/// conflicts=1`; shown as the device's own word, never used to decide its state.
struct ClientState: Sendable, Equatable, Codable {
    /// The largest figure taken.
    static let largest: Int64 = 1_000_000_000

    /// Operations waiting to be pushed.
    var queue: Int64
    /// Seconds since the oldest of them was made.
    var oldest: Int64
    /// Conflicts waiting for a person.
    var conflicts: Int64

    init(queue: Int64, oldest: Int64, conflicts: Int64) {
        self.queue = queue
        self.oldest = oldest
        self.conflicts = conflicts
    }

    /// The header's value.
    var headerValue: String { "queue=\(queue), oldest=\(oldest), conflicts=\(conflicts)" }

    /// Reads the header: each of `queue`, `oldest` and `conflicts` at most once, a whole number from 0
    /// to 1,000,000,000; no other key. A missing key is 0.
    init(parsing text: String) throws(TableError) {
        guard text.utf8.count <= 200 else { throw Self.refusal("it is longer than 200 characters") }
        var figures: [String: Int64] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pair[0].trimmingCharacters(in: .whitespaces)
            guard pair.count == 2, ["queue", "oldest", "conflicts"].contains(key) else {
                throw Self.refusal(
                    "'\(part.trimmingCharacters(in: .whitespaces))' is not queue=N, oldest=N or conflicts=N")
            }
            guard figures[key] == nil else { throw Self.refusal("\(key) is given twice") }
            let digits = pair[1].trimmingCharacters(in: .whitespaces)
            guard !digits.isEmpty, digits.utf8.count <= 10, digits.utf8.allSatisfy({ (48...57).contains($0) }),
                let value = Int64(digits), value <= Self.largest
            else {
                throw Self.refusal("\(key) must be a whole number from 0 to \(Self.largest)")
            }
            figures[key] = value
        }
        self.init(queue: figures["queue"] ?? 0, oldest: figures["oldest"] ?? 0, conflicts: figures["conflicts"] ?? 0)
    }

    private static func refusal(_ reason: String) -> TableError {
        .invalidRequest("X-TodoSync-Client-State is not understood: \(reason).")
    }
}
