import GRDB

/// `?, ?, …`: `count` SQL parameters, for an `IN` list or a row of `VALUES`.
public func sqlParameters(_ count: Int) -> String {
    count > 0 ? String(repeating: "?, ", count: count - 1) + "?" : ""
}

extension StatementArguments {
    /// Positional arguments, without GRDB's initializer for a sequence of one type: that one maps the
    /// values with a key path, which the runtime instantiates on every call (12% of a push's local
    /// work). Its initializer for optional existentials maps with a closure.
    public init(positional values: [some DatabaseValueConvertible]) {
        self.init(values.map { $0 as (any DatabaseValueConvertible)? })
    }
}
