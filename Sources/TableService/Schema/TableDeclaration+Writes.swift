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
