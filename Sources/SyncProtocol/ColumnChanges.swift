import HTTPTypes

/// What a table's schema file changed in its columns, as the service announces it on every page
/// of the table (`Todosync-Column-Changes: complete=retired, priority=added, title=renamed:text`):
/// a client whose store still has a column under a former name renames it in place before it
/// stores the page, and its Data page marks each column so changed.
public struct ColumnChanges: Sendable, Equatable {
    /// What happened to one column.
    public enum Change: Sendable, Equatable {
        /// The service added it, with a default for the rows that had no value.
        case added
        /// It took over the values of the column called `from`.
        case renamed(from: String)
        /// The service keeps it but no longer answers it or stores writes to it.
        case retired

        /// "added by the service", "renamed from text", "retired by the service".
        public var label: String {
            switch self {
            case .added: "added by the service"
            case .renamed(let from): "renamed from \(from)"
            case .retired: "retired by the service"
            }
        }
    }

    /// By column name (the current one).
    public var columns: [String: Change]

    public init(_ columns: [String: Change] = [:]) {
        self.columns = columns
    }

    /// The changes a header value lists; entries this version cannot read are left out.
    public init(header: String?) {
        var columns: [String: Change] = [:]
        for entry in (header ?? "").split(separator: ",") {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
            guard parts.count == 2, !parts[0].isEmpty else { continue }
            switch parts[1] {
            case "added": columns[parts[0]] = .added
            case "retired": columns[parts[0]] = .retired
            case let value where value.hasPrefix("renamed:") && value.count > 8:
                columns[parts[0]] = .renamed(from: String(value.dropFirst(8)))
            default: continue
            }
        }
        self.columns = columns
    }

    public var isEmpty: Bool { columns.isEmpty }

    /// Former name → current name, for each renamed column.
    public var renames: [String: String] {
        var renames: [String: String] = [:]
        for (name, change) in columns {
            if case .renamed(let from) = change { renames[from] = name }
        }
        return renames
    }

    /// The header value, entries in column order.
    public var header: String {
        columns.keys.sorted().map { name in
            switch columns[name]! {
            case .added: "\(name)=added"
            case .renamed(let from): "\(name)=renamed:\(from)"
            case .retired: "\(name)=retired"
            }
        }.joined(separator: ", ")
    }
}

extension ProtocolHeader {
    /// Where a page lists its table's column changes (see ``ColumnChanges``).
    public static let columnChanges = HTTPField.Name("Todosync-Column-Changes")!
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
