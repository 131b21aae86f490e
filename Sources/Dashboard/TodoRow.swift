import HTTPServer

/// A todo as the list and the editor show it.
///
/// It holds everything its row shows, so it is also the key of the row's rendered HTML in
/// the list's ``Views/FragmentCache``.
struct TodoRow: Hashable, Sendable {
    var id: String
    var text: String
    var complete: Bool
    /// Readable, or empty before the first push.
    var updatedAt: String
    var version: String?
    /// The pending operation's badge, if the todo has one.
    var badge: Badge?

    /// A pending operation's badge: its CSS kind, its words and where it links.
    struct Badge: Hashable, Sendable {
        var kind: String
        var label: String
        var href: String
    }

    /// What the templates see (`partials/todo-row`, `item`).
    var context: [String: Any] {
        var context: [String: Any] = [
            "id": id, "idPath": PercentDecoding.encode(id), "text": text, "complete": complete,
        ]
        if !updatedAt.isEmpty { context["updatedAt"] = updatedAt }
        context["version"] = version
        if let badge { context["badge"] = ["kind": badge.kind, "label": badge.label, "href": badge.href] }
        return context
    }
}
