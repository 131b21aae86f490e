/// Links between the pages of a list (rows, the queue), with a summary of what is shown.
struct Pager: Encodable, Sendable {
    var summary: String
    var first: String?
    var previous: String?
    var next: String?
    var last: String?
}

/// A link to one filter of a list, marked when it is the one shown.
struct FilterLink: Encodable, Sendable {
    var label: String
    var href: String
    var current: Bool
}
