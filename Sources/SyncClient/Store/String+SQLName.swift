extension String {
    /// The string quoted as an SQL identifier, double quotes in it doubled: any name a service gives
    /// a table's column (`a"b`, `<script>`, `x); DROP TABLE t; --`) is one identifier.
    var quotedSQLName: String {
        // Built for every statement of every row: Foundation's replacingOccurrences only when needed.
        guard contains("\"") else { return "\"" + self + "\"" }
        return "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
