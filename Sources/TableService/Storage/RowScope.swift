/// Which rows of a table a request may see and change: all of them, or one user's.
///
/// A per-user table stores each row's owner in a hidden column (never sent, never filterable,
/// refused in bodies). Reads, pulls and counts add `owner = caller` to their SQL; a single item
/// of another owner is answered as missing (404), never as a conflict, which would reveal it.
enum RowScope: Sendable, Equatable {
    case all
    case owner(String)

    /// The hidden column that holds a row's owner (the `sub` of the token that inserted it).
    static let ownerColumn = "__owner"

    var owner: String? {
        switch self {
        case .all: nil
        case .owner(let user): user
        }
    }
}
