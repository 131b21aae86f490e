import Foundation
import Testing
import Views

@Suite struct FragmentCacheTests {
    struct Row: Hashable, Sendable {
        var id: Int
        var text: String
    }

    /// A cache over `<li>{{text}}</li>`.
    struct Fixture {
        let cache: FragmentCache<Row>

        init(capacity: Int = 100) throws {
            let templates = try TemplateLibrary(
                folder: try TemplateLibraryTests.folder(["row": "{{% CONTENT_TYPE: HTML}}<li>{{text}}</li>"]))
            cache = FragmentCache(templates: templates, template: "row", capacity: capacity)
        }

        var renderCount: Int { cache.renderCount }
    }

    @Test func rendersEachValueInOrderAndEscaped() throws {
        let fixture = try Fixture()
        let html = fixture.cache.render([Row(id: 1, text: "a < b"), Row(id: 2, text: "\"two\"")])
        #expect(html == "<li>a &lt; b</li><li>&quot;two&quot;</li>")
    }

    @Test func anUnchangedValueIsRenderedOnce() throws {
        let fixture = try Fixture()
        let rows = (1...50).map { Row(id: $0, text: "todo \($0)") }
        let first = fixture.cache.render(rows)
        let second = fixture.cache.render(rows)
        #expect(first == second)
        #expect(fixture.renderCount == 50)
    }

    @Test func aChangedValueIsRenderedAfresh() throws {
        let fixture = try Fixture()
        _ = fixture.cache.render([Row(id: 1, text: "before")])
        let html = fixture.cache.render([Row(id: 1, text: "after")])
        #expect(html == "<li>after</li>")
        #expect(fixture.renderCount == 2)
    }

    @Test func keepsAtMostTwoGenerationsOfFragments() throws {
        let fixture = try Fixture(capacity: 10)
        for id in 1...100 { _ = fixture.cache.fragment(Row(id: id, text: "\(id)")) }
        #expect(fixture.cache.count <= 20)
        // The newest are still there; the oldest are rendered again.
        _ = fixture.cache.fragment(Row(id: 100, text: "100"))
        #expect(fixture.renderCount == 100)
        _ = fixture.cache.fragment(Row(id: 1, text: "1"))
        #expect(fixture.renderCount == 101)
    }

    @Test func fragmentsStillInUseSurviveTheOlderGenerationsDrop() throws {
        let fixture = try Fixture(capacity: 10)
        let kept = Row(id: 0, text: "kept")
        for id in 1...100 {
            _ = fixture.cache.fragment(Row(id: id, text: "\(id)"))
            _ = fixture.cache.fragment(kept)
        }
        #expect(fixture.renderCount == 101)
    }

    @Test func concurrentPagesGetTheSameHTML() async throws {
        let fixture = try Fixture(capacity: 16)
        let rows = (1...40).map { Row(id: $0, text: "todo <\($0)>") }
        let expected = rows.map { "<li>todo &lt;\($0.id)&gt;</li>" }.joined()
        let pages = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { fixture.cache.render(rows) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(pages.allSatisfy { $0 == expected })
    }
}
