/// A change a write needs in its table's columns before its values fit.
enum SchemaChange: Sendable, Equatable {
    /// A new column, of the type of the value that created it (`.unknown` for a null).
    case add(name: String, type: ColumnType)
    /// A column that held only nulls gets its first type.
    case setType(name: String, type: ColumnType)
}

extension TableSchema {
    /// The changes `fields` need, in the order the fields came; a value of another type than its
    /// column's is a 400 naming both.
    func changes(for fields: [StoredItem.Field]) throws(TableError) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        var added: Set<String> = []
        for field in fields {
            let wanted = ColumnType(of: field.value)
            if let column = column(named: field.name) {
                guard let wanted, column.type != wanted else { continue }
                guard column.type == .unknown else {
                    throw TableError.invalidRequest(
                        "The property '\(field.name)' holds \(column.type.plural) in table '\(name)', "
                            + "but this request sends \(wanted.plural). Send a value of that type, or null.")
                }
                changes.append(.setType(name: column.name, type: wanted))
            } else if added.insert(field.name.lowercased()).inserted {
                changes.append(.add(name: field.name, type: wanted ?? .unknown))
            }
        }
        return changes
    }

    /// The schema after `changes`.
    mutating func apply(_ changes: [SchemaChange]) {
        for change in changes {
            switch change {
            case .add(let name, let type): add(Column(name: name, type: type, isSystem: false))
            case .setType(let name, let type): setType(type, of: name)
            }
        }
    }
}
