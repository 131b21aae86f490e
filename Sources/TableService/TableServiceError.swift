/// Why the table service could not start.
public enum TableServiceError: Error, CustomStringConvertible {
    /// A setting is out of range (page size, key, table name, templates); the message names it.
    case invalidConfiguration(String)
    /// The database cannot be opened, reached or prepared; the message says why.
    case cannotOpenDatabase(String)
    /// The HTTP server cannot listen (address in use, bad host); the message says what to change.
    case cannotListen(String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let message): message
        case .cannotOpenDatabase(let reason): "The table service cannot open its database: \(reason)"
        case .cannotListen(let reason): reason
        }
    }
}
