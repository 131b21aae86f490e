import SyncProtocol

/// A column of a schema file written as an object: `{"type": "integer", "default": 3}`,
/// `{"type": "string", "renamedFrom": "text"}`, `{"type": "string", "retired": true}`.
extension ServiceSchema {
    static let columnSettings = ["type", "default", "renamedFrom", "retired"]

    /// The declared column `column` of `table` from its value in the file.
    static func column(
        _ value: JSONValue, table: String, _ column: String
    ) throws(ServiceSchemaError) -> TableDeclaration.DeclaredColumn {
        guard case .object(let settings) = value, settings["enum"] == nil else {
            return .init(name: column, type: try type(value, table: table, column))
        }
        let place = "Table '\(table)', column '\(column)'"
        for key in settings.keys.sorted() where !columnSettings.contains(key) {
            throw ServiceSchemaError("\(place): unknown setting '\(key)'; use type, default, renamedFrom and retired.")
        }
        guard let typeValue = settings["type"] else {
            throw ServiceSchemaError(
                "\(place): give the column's type, such as {\"type\": \"integer\", \"default\": 3}.")
        }
        var declared = TableDeclaration.DeclaredColumn(name: column, type: try type(typeValue, table: table, column))
        if let value = settings["default"], value != .null {
            guard let stored = declared.type.stored(value) else {
                throw ServiceSchemaError(
                    "\(place): the default \(value.jsonText) is not \(declared.type.expectation); give a default "
                        + "of the column's type.")
            }
            declared.defaultValue = stored
        }
        if let old = settings["renamedFrom"] {
            guard case .string(let name) = old, (try? ItemChanges.checkColumnName(name)) != nil,
                name.lowercased() != column.lowercased()
            else {
                throw ServiceSchemaError(
                    "\(place): renamedFrom must be the column's former name, another column name.")
            }
            declared.renamedFrom = name
        }
        if let flag = settings["retired"] {
            guard case .bool(let retired) = flag else {
                throw ServiceSchemaError("\(place): retired must be true or false.")
            }
            declared.retired = retired
        }
        return declared
    }

    /// Refuses a rename onto a column the file declares too, or two columns renamed from one name.
    static func checkRenames(
        _ columns: [TableDeclaration.DeclaredColumn], table: String, lines: SchemaFileLines
    ) throws(ServiceSchemaError) {
        var formerNames: Set<String> = []
        for column in columns {
            guard let old = column.renamedFrom?.lowercased() else { continue }
            let place = "Table '\(table)', column '\(column.name)'"
            if columns.contains(where: { $0.name.lowercased() == old && !$0.retired }) {
                throw ServiceSchemaError(
                    "\(place) is renamed from '\(column.renamedFrom!)', which the file declares too; "
                        + "remove one of the two.", line: column.line)
            }
            guard formerNames.insert(old).inserted else {
                throw ServiceSchemaError(
                    "\(place): another column is renamed from '\(column.renamedFrom!)' too; keep one.",
                    line: column.line)
            }
        }
    }
}
