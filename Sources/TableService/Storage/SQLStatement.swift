/// A statement of the metadata tables (`__installations`, `__schema_changes`, `__columns`) or a
/// one-row read both stores run alike: SQL with `?` placeholders and the values they take in order.
/// What the stores share is written once in these terms (``TableStorage/query(_:)``,
/// ``TableStorage/execute(_:)``), and each store runs it through its own driver.
struct SQLStatement: Sendable {
    var sql: String
    var values: [SQLValue] = []
}

/// A row of a metadata query, read by column name (never by position, so a statement's columns can
/// be reordered or added to without misreading): the names are those of the statement's SELECT,
/// compared without case (PostgreSQL folds an unquoted alias to lower case).
struct SQLRow: Sendable {
    private let values: [String: SQLValue]

    init(columns: some Sequence<(name: String, value: SQLValue)>) {
        values = Dictionary(
            columns.lazy.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// The value of `column`; a column the statement does not select is a mistake of ours, thrown
    /// as a storage failure rather than read as null.
    func value(_ column: String) throws(TableError) -> SQLValue {
        guard let value = values[column.lowercased()] else {
            throw .storage(.other("The database's answer has no column '\(column)'."))
        }
        return value
    }

    func text(_ column: String) throws(TableError) -> String {
        guard case .text(let text) = try value(column) else { throw mismatch(column, "text") }
        return text
    }

    /// Text or null.
    func optionalText(_ column: String) throws(TableError) -> String? {
        try value(column) == .null ? nil : try text(column)
    }

    func integer(_ column: String) throws(TableError) -> Int64 {
        guard case .integer(let integer) = try value(column) else { throw mismatch(column, "an integer") }
        return integer
    }

    /// Each column has one type, so a value of another type (never seen) is a database this
    /// version does not understand.
    private func mismatch(_ column: String, _ expected: String) -> TableError {
        .storage(
            .other(
                "The database answered \(values[column.lowercased()] ?? .null) in '\(column)' where \(expected) was expected."
            ))
    }
}
