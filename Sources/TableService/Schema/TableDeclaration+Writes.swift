import SyncProtocol

extension TableDeclaration {
    /// Brings the fields of a write to the declared shape: a field under a renamed column's
    /// former name is stored under the new one (unless the write also sends the new name, which
    /// wins), and fields of retired columns are left out. Returns the former and retired names the
    /// write used, so the service can tell who still writes the old shape.
    func bringForward(_ fields: inout [StoredItem.Field]) -> [String] {
        guard columns.contains(where: { $0.renamedFrom != nil || $0.retired }) else { return [] }
        var oldNames: [String] = []
        let sent = Set(fields.map { $0.name.lowercased() })
        var result: [StoredItem.Field] = []
        for field in fields {
            let name = field.name.lowercased()
            if let renamed = columns.first(where: { $0.renamedFrom?.lowercased() == name && !$0.retired }) {
                oldNames.append(field.name)
                if !sent.contains(renamed.name.lowercased()) {
                    result.append(StoredItem.Field(name: renamed.name, value: field.value))
                }
            } else if let column = column(named: field.name), column.retired {
                oldNames.append(field.name)
            } else {
                result.append(field)
            }
        }
        fields = result
        return oldNames
    }

    /// Checks the values sent under former or retired names against their declared types, before
    /// ``bringForward(_:)`` maps or drops them: a write that sends both a former and a new name
    /// keeps the new one's value, and writes to a retired column are ignored, but a value of the
    /// wrong type is refused in either case, as it is under the column's name.
    func checkFormerNames(_ fields: [StoredItem.Field]) throws(TableError) {
        guard columns.contains(where: { $0.renamedFrom != nil || $0.retired }) else { return }
        var former: [StoredItem.Field] = fields.compactMap { field in
            let name = field.name.lowercased()
            if let renamed = columns.first(where: { $0.renamedFrom?.lowercased() == name && !$0.retired }) {
                return StoredItem.Field(name: renamed.name, value: field.value)
            }
            if let column = column(named: field.name), column.retired { return field }
            return nil
        }
        try check(&former)
    }

    /// Adds the default of each declared column that an insert leaves out.
    func addDefaults(to fields: inout [StoredItem.Field]) {
        let sent = Set(fields.map { $0.name.lowercased() })
        for column in columns where !column.retired && !sent.contains(column.name.lowercased()) {
            if let value = column.defaultValue { fields.append(StoredItem.Field(name: column.name, value: value)) }
        }
    }

    /// The columns the file added (with a default), renamed or retired, as pages announce them.
    var columnChanges: ColumnChanges {
        var changes: [String: ColumnChanges.Change] = [:]
        for column in columns {
            if column.retired {
                changes[column.name] = .retired
            } else if let former = column.renamedFrom {
                changes[column.name] = .renamed(from: former)
            } else if column.defaultValue != nil {
                changes[column.name] = .added
            }
        }
        return ColumnChanges(changes)
    }
}
