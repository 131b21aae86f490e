/// `?, ?, …`: `count` SQL parameters, for an `IN` list or a row of `VALUES`.
func sqlParameters(_ count: Int) -> String {
    Array(repeating: "?", count: count).joined(separator: ", ")
}
