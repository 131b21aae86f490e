/// A statement of the metadata tables (`__installations`, `__schema_changes`, `__columns`) or a
/// one-row read both stores run alike: SQL with `?` placeholders and the values they take in order.
/// What the stores share is written once in these terms (``TableStorage/query(_:)``,
/// ``TableStorage/execute(_:)``), and each store runs it through its own driver.
struct SQLStatement: Sendable {
    var sql: String
    var values: [SQLValue] = []
}

/// Reading back a value of a metadata query: each of its columns has one type, so a value of
/// another type (never seen) is a database this version does not understand.
extension SQLValue {
    func text() throws(TableError) -> String {
        guard case .text(let text) = self else { throw mismatch("text") }
        return text
    }

    /// Text or null.
    func optionalText() throws(TableError) -> String? {
        self == .null ? nil : try text()
    }

    func integer() throws(TableError) -> Int64 {
        guard case .integer(let integer) = self else { throw mismatch("an integer") }
        return integer
    }

    private func mismatch(_ expected: String) -> TableError {
        .storage(.other("The database answered \(self) where \(expected) was expected."))
    }
}
