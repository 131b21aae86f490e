import SyncProtocol

extension OpenAPIDocument {
    /// The patterns ``OpenAPIDocument`` gives a table's `$select`, `$orderby` and `$filter`, from
    /// its columns: what a generated request may send and be answered 200. The service takes more
    /// (the OData filter language, functions, parentheses); the patterns describe the part a
    /// client can count on without knowing the rows.
    struct QueryPatterns: Sendable, Equatable {
        let select: String
        let orderBy: String
        let filter: String

        /// The patterns of `schema`'s columns; a column `declaration` gives a date, time or enum
        /// type is left out of the filter (its literals are typed).
        init(_ schema: TableSchema, _ declaration: TableDeclaration?) {
            let names = schema.columns.map(\.name).map(Self.escaped)
            let column = "(" + names.joined(separator: "|") + ")"
            // Empty: as without the option (every column; the default order).
            select = "^(\(column)(,\(column))*)?$"
            let order = "\(column)( (asc|desc))?"
            orderBy = "^(\(order)(,\(order))*)?$"
            var comparisons: [String] = []
            let comparable = schema.columns.filter { column in
                switch declaration?.column(named: column.name)?.type {
                case nil, .string, .integer, .number, .boolean: true
                case .dateTime, .dateOnly, .timeOfDay, .enumeration: false
                }
            }
            let byType = Dictionary(grouping: comparable, by: \.type)
            let operators = "(eq|ne|gt|ge|lt|le)"
            for (type, columns) in byType.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let names = "(" + columns.map { Self.escaped($0.name) }.joined(separator: "|") + ")"
                switch type {
                case .string: comparisons.append("\(names) \(operators) '[A-Za-z0-9 ]{0,16}'")
                case .number: comparisons.append("\(names) \(operators) -?[0-9]{1,9}")
                case .boolean: comparisons.append("\(names) (eq|ne) (true|false)")
                // Days every month has (a 29 February of a common year is no date).
                case .date:
                    comparisons.append(
                        "\(names) \(operators) 20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T00:00:00\\.000Z")
                case .unknown: comparisons.append("\(names) (eq|ne) null")
                }
            }
            // A bare boolean is a filter too (`true` keeps every row).
            comparisons.append("true|false")
            let comparison = "(" + comparisons.joined(separator: "|") + ")"
            // Empty: as without the option (every row).
            filter = "^(\(comparison)( and \(comparison))*)?$"
        }

        /// `name` with regular-expression characters escaped (column names are letters, digits
        /// and underscores, so in practice none).
        private static func escaped(_ name: String) -> String {
            var escaped = ""
            for character in name {
                if !(character.isLetter || character.isNumber || character == "_") { escaped.append("\\") }
                escaped.append(character)
            }
            return escaped
        }
    }
}
