import Foundation
import HTTPServer
import TestSupport
import Testing

@testable import Views

@Suite struct TemplateLibraryTests {
    static func folder(_ files: [String: String]) throws -> URL {
        let folder = try TemporaryFolder().url
        for (name, text) in files {
            let url = folder.appendingPathComponent(name + ".mustache")
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return folder
    }

    static var projectTemplates: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Templates")
    }

    @Test func valuesAreHTMLEscapedByDefault() throws {
        let library = try TemplateLibrary(folder: try Self.folder(["page": "<p>{{text}}</p>"]))
        let html = library.render("page", ["text": "<img src=x onerror=alert(1)> & \"quotes\""])
        #expect(html == "<p>&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;</p>")
    }

    @Test func pagesInheritTheLayoutAndUsePartials() throws {
        let library = try TemplateLibrary(
            folder: try Self.folder([
                "layout": "<main>{{>parts/nav}}{{$content}}default{{/content}}</main>",
                "parts/nav": "<nav>{{name}}</nav>",
                "page": "{{<layout}}{{$content}}<h1>{{title}}</h1>{{/content}}{{/layout}}",
            ]))
        #expect(
            library.render("page", ["title": "Hi", "name": "todosync"]) == "<main><nav>todosync</nav><h1>Hi</h1></main>"
        )
    }

    @Test func missingPartialFailsAtStartWithItsName() throws {
        let folder = try Self.folder(["page": "{{>partials/missing}}"])
        #expect(throws: TemplateError.missing(name: "partials/missing", neededBy: "page")) {
            try TemplateLibrary(folder: folder)
        }
    }

    @Test func brokenTemplateFailsAtStartWithItsName() throws {
        let folder = try Self.folder(["good": "ok", "bad": "{{#open}} never closed"])
        #expect { try TemplateLibrary(folder: folder) } throws: { error in
            if case TemplateError.invalid(let name, _, _) = error { return name == "bad" }
            return false
        }
    }

    @Test func missingRequiredTemplateFailsAtStart() throws {
        let folder = try Self.folder(["page": "ok"])
        #expect(throws: TemplateError.missing(name: "layout", neededBy: nil)) {
            try TemplateLibrary(folder: folder, required: ["layout"])
        }
    }

    @Test func projectTemplatesAllLoad() throws {
        let library = try TemplateLibrary(folder: Self.projectTemplates)
        #expect(library.names.contains("layout"))
    }

    @Test func explicitResourceFolderThatDoesNotExistNamesTheFlag() {
        #expect { try ResourceFolders.locate(publicDir: "/nonexistent/public") } throws: { error in
            "\(error)".contains("--public-dir")
        }
    }
}

@Suite struct HTMLEscapingTests {
    @Test func fastContentTypeEscapesLikeTheDefault() throws {
        let folder = try TemplateLibraryTests.folder([
            "fast": "{{% CONTENT_TYPE: HTML}}<p title=\"{{text}}\">{{text}}</p>",
            "default": "<p title=\"{{text}}\">{{text}}</p>",
        ])
        let library = try TemplateLibrary(folder: folder)
        for text in ["<script>alert('x')</script> & \"q\"", "plain", "ünïcødé <b>✓</b>", ""] {
            #expect(library.render("fast", ["text": text]) == library.render("default", ["text": text]))
        }
        #expect(library.render("fast", ["text": "<b>"]) == "<p title=\"&lt;b&gt;\">&lt;b&gt;</p>")
    }
}

/// A typed page the way controllers build them: the template must see exactly its stored
/// properties, whether swift-mustache reads the value itself or the dictionaries it is turned into.
private struct TypedPage: Encodable {
    enum Tone: String, Encodable { case calm, loud }

    struct Row: Encodable {
        var name: String
        var count: Int64
        var done: Bool
        var note: String?
    }

    var title: String
    var tone: Tone
    var rows: [Row]
    var empty: [Row]
    var missing: String?
    var ratio: Double
    var fragments: RenderedFragments<String>
}

@Suite struct TypedContextTests {
    @Test func aTypedValueShowsItsStoredPropertiesWithNilOptionalsAbsent() throws {
        let library = try TemplateLibrary(
            folder: try TemplateLibraryTests.folder([
                "page": """
                {{title}} {{tone}} {{ratio}}|{{#rows}}[{{name}} {{count}}{{#done}} done{{/done}}\
                {{#note}} ({{note}}){{/note}}{{^note}} -{{/note}} of {{title}}]{{/rows}}|\
                {{^empty}}none{{/empty}}|{{^missing}}no missing{{/missing}}|{{{fragments}}}{{^fragments}}x{{/fragments}}
                """
            ]))
        let page = TypedPage(
            title: "<Todos>", tone: .loud,
            rows: [.init(name: "a", count: 3, done: true, note: "n&b"), .init(name: "b", count: 0, done: false)],
            empty: [], missing: nil, ratio: 1.5, fragments: RenderedFragments(values: ["x"], html: "<li>x</li>"))
        #expect(
            library.render("page", page)
                == "&lt;Todos&gt; loud 1.5|[a 3 done (n&amp;b) of &lt;Todos&gt;][b 0 - of &lt;Todos&gt;]|none|"
                + "no missing|<li>x</li>")
    }

    @Test func aTypedPageReachesTheTemplatesAsDictionariesAndArrays() throws {
        // What makes pages fast: no name is looked up in a typed value by reflection.
        let page = TypedPage(
            title: "t", tone: .calm, rows: [.init(name: "a", count: 1, done: false)], empty: [], missing: nil,
            ratio: 0, fragments: RenderedFragments(values: [], html: ""))
        let context = try #require(TemplateContext.make(page) as? [String: Any])
        #expect(context["missing"] == nil)
        #expect(context["tone"] as? String == "calm")
        let rows = try #require(context["rows"] as? [Any])
        let row = try #require(rows.first as? [String: Any])
        #expect(row["count"] as? Int64 == 1 && row["note"] == nil)
        #expect(context["fragments"] is RenderedFragments<String>)
    }
}
