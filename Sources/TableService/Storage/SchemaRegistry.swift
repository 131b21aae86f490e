import GRDB
import Synchronization

/// The schemas of all tables, cached in memory and changed only at commit time of the write that
/// changed them (so readers never see a column before it exists in the file).
final class SchemaRegistry: Sendable {
    private let schemas = Mutex<[String: TableSchema]>([:])

    /// The schema of `table` (any case), or `nil` if the table was never created.
    func schema(of table: String) -> TableSchema? {
        schemas.withLock { $0[table.lowercased()] }
    }

    /// All schemas, sorted by name.
    func all() -> [TableSchema] {
        schemas.withLock { $0.values.sorted { $0.name < $1.name } }
    }

    /// Replaces the schema of its table (at once: the caller knows it is committed); returns it.
    @discardableResult
    func store(_ schema: TableSchema) -> TableSchema {
        schemas.withLock { $0[schema.name.lowercased()] = schema }
        return schema
    }

    /// Publishes `schema` when the current transaction of `db` commits.
    func publish(_ schema: TableSchema, onCommitOf db: Database) {
        db.afterNextTransaction(onCommit: { [self] _ in
            schemas.withLock { $0[schema.name.lowercased()] = schema }
        })
    }

    /// Loads every table's schema from the metadata tables.
    func load(_ db: Database) throws {
        let loaded = try Self.read(db)
        schemas.withLock { $0 = loaded }
    }

    /// Every table's schema as the metadata tables hold it, by lower-cased name.
    static func read(_ db: Database) throws -> [String: TableSchema] {
        var loaded: [String: TableSchema] = [:]
        for name in try String.fetchAll(db, sql: "SELECT name FROM __tables") {
            loaded[name.lowercased()] = TableSchema(name: name)
        }
        let rows = try Row.fetchAll(
            db, sql: "SELECT tableName, name, type FROM __columns ORDER BY tableName, position")
        for row in rows {
            let table: String = row["tableName"]
            let name: String = row["name"]
            let type = ColumnType(rawValue: row["type"]) ?? .unknown
            loaded[table.lowercased()]?.add(Column(name: name, type: type, isSystem: false))
        }
        return loaded
    }
}
