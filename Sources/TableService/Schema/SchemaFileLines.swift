import Foundation

/// Finds where a schema file declares a column, so that a refusal can name the line. The parser
/// keeps no positions; the declaration is the first `"column":` after the table's `"table":`.
struct SchemaFileLines: Sendable {
    private let text: [UInt8]

    init(_ data: Data) {
        text = Array(data)
    }

    /// The 1-based line of the key `column` inside the object of `table`, 0 when not found.
    func line(ofColumn column: String, inTable table: String) -> Int {
        guard let tableKey = keyOffset(table, from: 0) else { return 0 }
        guard let offset = keyOffset(column, from: tableKey) else { return lineNumber(at: tableKey) }
        return lineNumber(at: offset)
    }

    /// Where `"name"` followed by `:` first appears at or after `start`.
    private func keyOffset(_ name: String, from start: Int) -> Int? {
        let needle = Array("\"\(name)\"".utf8)
        guard text.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= text.count {
            if text[index..<index + needle.count].elementsEqual(needle) {
                var after = index + needle.count
                while after < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[after]) { after += 1 }
                if after < text.count, text[after] == UInt8(ascii: ":") { return index }
            }
            index += 1
        }
        return nil
    }

    private func lineNumber(at offset: Int) -> Int {
        1 + text[..<offset].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }
}
