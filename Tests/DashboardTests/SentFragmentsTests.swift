import Testing

@testable import Dashboard

/// What a live page's stream sends again: only the fragments whose HTML changed.
@Suite struct SentFragmentsTests {
    @Test func everyFragmentIsSentTheFirstTime() {
        var sent = SentFragments()
        let first = [
            LiveFragment(template: "a", html: "<p id=a>1</p>"), LiveFragment(template: "b", html: "<p id=b>1</p>"),
        ]
        #expect(sent.changes(first) == first)
    }

    @Test func anUnchangedFragmentIsNotSentAgainAndAChangedOneIs() {
        var sent = SentFragments()
        _ = sent.changes([
            LiveFragment(template: "a", html: "<p id=a>1</p>"), LiveFragment(template: "b", html: "<p id=b>1</p>"),
        ])
        let next = sent.changes([
            LiveFragment(template: "a", html: "<p id=a>1</p>"), LiveFragment(template: "b", html: "<p id=b>2</p>"),
        ])
        #expect(next == [LiveFragment(template: "b", html: "<p id=b>2</p>")])
        #expect(sent.changes([LiveFragment(template: "b", html: "<p id=b>2</p>")]).isEmpty)
    }
}
