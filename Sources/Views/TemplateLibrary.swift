import Foundation
import HTTPServer
import HTTPTypes
import Mustache

/// The HTML templates of one folder (`Templates/`), parsed once at start-up.
///
/// Every `*.mustache` file is registered under its path without the extension
/// (`service/table.mustache` → `service/table`). `{{x}}` is HTML-escaped (start a template with
/// `{{% CONTENT_TYPE: HTML}}` for the fast escaper, see ``HTMLEscaping``); pages reuse the
/// layout through template inheritance (`{{<layout}}{{$content}}…{{/content}}{{/layout}}`)
/// and partials (`{{>header}}`). A template that does not parse, or that names a partial or
/// parent that does not exist, stops start-up with the file's name.
public struct TemplateLibrary: Sendable {
    private let library: MustacheLibrary
    /// The names of all registered templates.
    public let names: Set<String>

    /// Loads every template under `folder` and checks that `required` ones exist.
    public init(folder: URL, required: [String] = []) throws(TemplateError) {
        MustacheContentTypes.register(FastHTMLContentType(), named: "HTML")
        let files = Self.templateFiles(in: folder)
        guard !files.isEmpty else { throw .noTemplates(folder: folder.path) }
        var library = MustacheLibrary()
        var sources: [String: String] = [:]
        for (name, url) in files {
            guard let source = try? String(contentsOf: url, encoding: .utf8) else {
                throw .unreadable(name: name, path: url.path)
            }
            do {
                try library.register(source, named: name)
            } catch {
                throw .invalid(name: name, path: url.path, reason: "\(error)")
            }
            sources[name] = source
        }
        let names = Set(sources.keys)
        for (name, source) in sources {
            for reference in Self.references(in: source) where !names.contains(reference) {
                throw .missing(name: reference, neededBy: name)
            }
        }
        for name in required where !names.contains(name) {
            throw .missing(name: name, neededBy: nil)
        }
        self.library = library
        self.names = names
    }

    /// Renders `template` with `context`: a typed value (its stored properties are the names the
    /// template sees, optionals that are nil count as absent), or dictionaries, arrays, strings,
    /// numbers and booleans.
    public func render(_ template: String, _ context: Any) -> String {
        // Names are checked at start-up, so a nil here is a programming error in a controller.
        library.render(TemplateContext.make(context), withTemplate: template) ?? ""
    }

    /// An HTML response rendered from `template`.
    public func page(_ template: String, _ context: Any, status: HTTPResponse.Status = .ok) -> Response {
        precondition(names.contains(template), "template '\(template)' was not loaded")
        return .html(render(template, context), status: status)
    }

    private static func templateFiles(in folder: URL) -> [(String, URL)] {
        let root = folder.resolvingSymlinksInPath().path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [(String, URL)] = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".mustache") else { continue }
            files.append((String(relative.dropLast(".mustache".count)), URL(fileURLWithPath: root + "/" + relative)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// Names of partials (`{{>name}}`) and parents (`{{<name}}`) a template refers to.
    static func references(in source: String) -> [String] {
        var names: [String] = []
        var rest = Substring(source)
        while let open = rest.range(of: "{{") {
            rest = rest[open.upperBound...]
            guard let close = rest.range(of: "}}") else { break }
            let tag = rest[..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            if let sigil = tag.first, sigil == ">" || sigil == "<" {
                names.append(tag.dropFirst().trimmingCharacters(in: .whitespaces))
            }
            rest = rest[close.upperBound...]
        }
        return names
    }
}

/// Why the templates could not be loaded; each names the template to fix.
public enum TemplateError: Error, CustomStringConvertible, Equatable {
    case noTemplates(folder: String)
    case unreadable(name: String, path: String)
    case invalid(name: String, path: String, reason: String)
    case missing(name: String, neededBy: String?)

    public var description: String {
        switch self {
        case .noTemplates(let folder):
            "No templates (*.mustache) in \(folder). Pass --templates-dir with the project's Templates folder."
        case .unreadable(let name, let path): "Template '\(name)' (\(path)) cannot be read as UTF-8 text."
        case .invalid(let name, let path, let reason): "Template '\(name)' (\(path)) does not parse: \(reason)."
        case .missing(let name, let neededBy?):
            "Template '\(neededBy)' refers to '\(name)', which does not exist. Add \(name).mustache or fix the reference."
        case .missing(let name, nil): "Template '\(name)' is missing. Add \(name).mustache to the templates folder."
        }
    }
}
