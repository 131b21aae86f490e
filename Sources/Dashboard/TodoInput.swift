import Foundation
import HTTPServer

/// A todo's text and completion as typed into a form, checked before anything is stored.
struct TodoInput: Sendable, Equatable {
    static let maximumLength = 1000

    var text: String
    var complete: Bool

    /// What is wrong with a form, in words for the person who filled it in.
    struct Invalid: Error, Equatable {
        var message: String
        /// The text as typed, to show the form again.
        var text: String
        var complete: Bool
    }

    /// Reads `text` and `complete` (`true`/`false`, absent = false).
    static func parse(text rawText: String?, complete rawComplete: String?) -> Result<TodoInput, Invalid> {
        let text = (rawText ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let complete: Bool
        switch rawComplete {
        case nil, "false", "no", "off": complete = false
        case "true", "yes", "on": complete = true
        default:
            return .failure(Invalid(message: "Choose Yes or No for “Complete”.", text: text, complete: false))
        }
        if text.isEmpty {
            return .failure(
                Invalid(message: "Write what needs doing: the text cannot be empty.", text: text, complete: complete))
        }
        if text.count > maximumLength {
            return .failure(
                Invalid(
                    message: "Keep the text to \(maximumLength) characters or fewer; this one has \(text.count).",
                    text: String(text.prefix(maximumLength)), complete: complete))
        }
        return .success(TodoInput(text: text, complete: complete))
    }

    static func parse(_ form: URLEncodedForm) -> Result<TodoInput, Invalid> {
        parse(text: form["text"], complete: form["complete"])
    }
}
