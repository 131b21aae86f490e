import HTTPServer

/// A todo as the list and the editor show it.
///
/// It holds everything its row shows, so it is also the key of the row's rendered HTML in
/// the list's ``Views/FragmentCache``, and the context of `partials/todo-row`.
struct TodoRow: Hashable, Sendable, Encodable {
    var id: String
    /// The id as one path segment (`/items/{idPath}`).
    var idPath: String
    var text: String
    var complete: Bool
    /// Readable, or nil before the first push.
    var updatedAt: String?
    var version: String?
    /// The pending operation's badge, if the todo has one.
    var badge: Badge?
    /// The CSRF token of the row's quick-complete form (the same for every row; not part of its JSON).
    var csrf: String

    private enum CodingKeys: String, CodingKey { case id, idPath, text, complete, updatedAt, version, badge }

    init(
        id: String, text: String, complete: Bool, updatedAt: String, version: String?, badge: Badge?, csrf: String
    ) {
        self.id = id
        idPath = PercentDecoding.encode(id)
        self.text = text
        self.complete = complete
        self.updatedAt = updatedAt.isEmpty ? nil : updatedAt
        self.version = version
        self.badge = badge
        self.csrf = csrf
    }

    /// A pending operation's badge: its CSS kind, its words and where it links.
    struct Badge: Hashable, Sendable, Encodable {
        var kind: String
        var label: String
        var href: String
    }
}
