import Mustache

/// Values already rendered to HTML by a ``FragmentCache``, as one value of a page's context.
///
/// A template shows the HTML with a triple mustache (`{{{rows}}}`); encoded as JSON (the API
/// view of the same page) it is the array of the values themselves, so the page and its JSON
/// never disagree.
public struct RenderedFragments<Value: Encodable & Sendable>: Encodable, Sendable, MustacheCustomRenderable {
    /// The values, in the order they were rendered.
    public let values: [Value]
    /// Their HTML, concatenated.
    public let html: String

    public init(values: [Value], html: String) {
        self.values = values
        self.html = html
    }

    /// The HTML (the template must not escape it again: use `{{{…}}}`).
    public var renderText: String { html }

    /// Empty when there are no values, so `{{#rows}}…{{/rows}}` can guard a table.
    public var isNull: Bool { values.isEmpty }

    public func encode(to encoder: any Encoder) throws {
        try values.encode(to: encoder)
    }
}
