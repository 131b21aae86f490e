import HTTPTypes

/// The renamed columns of a table, as the service announces them on every page of it
/// (`Todosync-Renamed-Columns: text=title, due=dueAt`): a client whose store still has a column
/// under a former name renames it in place before it stores the page.
public struct ColumnRenames: Sendable, Equatable {
    /// Former name → current name.
    public var currentNames: [String: String]

    public init(_ currentNames: [String: String] = [:]) {
        self.currentNames = currentNames
    }

    /// The renames a header value lists; pairs that are not `old=new` are left out.
    public init(header: String?) {
        var names: [String: String] = [:]
        for pair in (header ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let (old, new) = (parts[0].trimmingSpaces, parts[1].trimmingSpaces)
            if !old.isEmpty, !new.isEmpty { names[old] = new }
        }
        currentNames = names
    }

    public var isEmpty: Bool { currentNames.isEmpty }

    /// The header value, pairs in order of the former name.
    public var header: String {
        currentNames.keys.sorted().map { "\($0)=\(currentNames[$0]!)" }.joined(separator: ", ")
    }
}

extension ProtocolHeader {
    /// Where a page lists its table's renamed columns (see ``ColumnRenames``).
    public static let renamedColumns = HTTPField.Name("Todosync-Renamed-Columns")!
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
