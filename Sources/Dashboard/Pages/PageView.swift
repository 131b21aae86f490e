import Foundation
import HTTPServer

/// Everything one dashboard page shows: the layout's parts (header, navigation, messages) around
/// the page's own typed content.
///
/// The value becomes HTML through the page's template, which reads the content inside
/// `{{#page}}…{{/page}}`.
struct PageView<Content: Encodable & Sendable>: Encodable, Sendable {
    /// The CSRF token every form posts back.
    var csrf: String
    var header: HeaderView
    var nav: Navigation
    /// The page's own path, where forms such as Sync return to.
    var back: String
    /// The device's name in the demo ("Device A"), shown in the header and the window title.
    var device: String?
    /// Messages from the last action, shown once.
    var flash: [Flash]
    /// The signed-in role, when the dashboard asks who you are (Sign out shows then).
    var signedIn: String?
    /// The page's own content.
    var page: Content
}

/// Which section of the navigation bar is current.
struct Navigation: Encodable, Sendable, Equatable {
    /// Sections of the navigation bar.
    enum Section: String, Sendable { case todos, data, operations, conflicts, journal, log, settings, none }

    var current: String
    var todos: Bool
    var data: Bool
    var operations: Bool
    var conflicts: Bool
    var journal: Bool
    var log: Bool
    var settings: Bool

    init(_ section: Section) {
        current = section.rawValue
        todos = section == .todos
        data = section == .data
        operations = section == .operations
        conflicts = section == .conflicts
        journal = section == .journal
        log = section == .log
        settings = section == .settings
    }
}
