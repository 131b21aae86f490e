/// The names a table's columns can have: they become SQL column names on the service. todosync's
/// service refuses a property of another name, and the dashboard a new column of one.
public enum ColumnName {
    /// The rule, as an error message words it.
    public static let rule = "up to 128 letters, digits and underscores, starting with a letter or underscore"

    /// Whether `name` follows ``rule``.
    public static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        func isLetter(_ byte: UInt8) -> Bool {
            (65...90).contains(byte) || (97...122).contains(byte) || byte == UInt8(ascii: "_")
        }
        guard let first = bytes.first, isLetter(first), bytes.count <= 128 else { return false }
        return bytes.allSatisfy { isLetter($0) || (48...57).contains($0) }
    }
}
