/// One part of a page that follows the store (its rows, its form, the header's counts): the
/// partial the page itself includes to show it, and what that partial renders now.
///
/// The partial's HTML starts with the element the page's script swaps, found by its `id`.
struct LiveFragment: Sendable, Equatable {
    /// The partial, such as `data/list-body`: it renders the fragment in the page and in the stream.
    var template: String
    var html: String
}

/// What one stream has sent: the HTML of each fragment, so that only a fragment whose HTML
/// changed is sent again.
struct SentFragments: Sendable {
    private var html: [String: String] = [:]

    init() {}

    /// The fragments of `rendered` whose HTML differs from what was sent, now remembered as sent.
    mutating func changes(_ rendered: [LiveFragment]) -> [LiveFragment] {
        rendered.filter { fragment in
            guard html[fragment.template] != fragment.html else { return false }
            html[fragment.template] = fragment.html
            return true
        }
    }
}
