import Foundation
import SyncProtocol
import Testing

/// JSON objects (request bodies, a service's answers, the queue's items) are parsed keeping the
/// order of their keys.
@Suite struct OrderedJSONParserTests {
    @Test func keepsTheOrderOfKeysAndDecodesValues() throws {
        let members = try OrderedJSONParser.object(
            Array(
                #" {"text":"a\"b\\\u00e9\ud83d\ude00","complete":false,"priority":-2.5e1,"none":null,"list":[1,{"x":true}]} "#
                    .utf8))
        #expect(members.map(\.name) == ["text", "complete", "priority", "none", "list"])
        #expect(members[0].value == .string("a\"b\\é😀"))
        #expect(members[1].value == .bool(false))
        #expect(members[2].value == .number(-25))
        #expect(members[3].value == .null)
        #expect(members[4].value == .array([.number(1), .object(["x": .bool(true)])]))
    }

    @Test func refusesWhatIsNotOneJSONObject() {
        for text in [
            "", "[]", "\"x\"", "{", "{\"a\":1,}", "{\"a\" 1}", "{'a':1}", "{\"a\":01}", "{\"a\":1} x",
            "{\"a\":\"\u{1}\"}", "{\"a\":\"\\ud800\"}", "{\"a\":tru}", "{\"a\":1.}", "{\"a\":\"\\x\"}",
            String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40),
        ] {
            #expect(throws: OrderedJSONParser.Failure.self, "\(text)") {
                try OrderedJSONParser.object(Array(text.utf8))
            }
        }
    }

    @Test func readsWhatJSONValueWritesAndAgreesWithFoundation() throws {
        let item: JSONValue = [
            "id": "a/b ü", "text": "line\nbreak \"quoted\" \u{1} tab\t 😀", "n": 12, "x": -0.25, "big": 1e300,
            "flag": true, "none": nil, "list": [1, "two", [false], ["k": "v"]], "nested": ["deeper": ["deepest": 1]],
        ]
        let text = Array(item.jsonText.utf8)
        let parsed = try OrderedJSONParser.object(text)
        #expect(JSONValue.object(Dictionary(parsed, uniquingKeysWith: { $1 })) == item)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text)) == item)
    }

    @Test func keepsTextThatIsNotASCIIAndRefusesBytesThatAreNotUTF8() throws {
        let members = try OrderedJSONParser.object(Array(#"{"a":"grüße 😀","b":"x\ny ü"}"#.utf8))
        #expect(members[0].value == .string("grüße 😀"))
        #expect(members[1].value == .string("x\ny ü"))
        for invalid: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80]] {
            for (prefix, suffix) in [("", ""), ("\\n", ""), ("ok ", " \\t")] {
                let text =
                    Array(#"{"a":""#.utf8) + Array(prefix.utf8) + invalid + Array(suffix.utf8) + Array(#""}"#.utf8)
                #expect(throws: OrderedJSONParser.Failure.self, "\(invalid) \(prefix)") {
                    try OrderedJSONParser.object(text)
                }
            }
        }
    }

    @Test func nestingIsLimitedAsAsked() throws {
        let deep = String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40)
        #expect(throws: OrderedJSONParser.Failure.self) { try OrderedJSONParser.object(Array(deep.utf8)) }
        #expect(try OrderedJSONParser.object(Array(deep.utf8), maximumDepth: 64).count == 1)
    }

    @Test func readsAPageAsAnArrayOrAsResultsWithACount() throws {
        let bare = try OrderedJSONParser.page(Array(#" [{"id":"a","n":1},{"id":"b\"c"}] "#.utf8))
        #expect(bare.items.map { $0.map(\.name) } == [["id", "n"], ["id"]])
        #expect(bare.items[1][0].value == .string("b\"c"))
        #expect(bare.count == nil)

        let counted = try OrderedJSONParser.page(
            Array(#"{"extra":{"x":[1]},"results":[{"id":"a"}],"count":120}"#.utf8))
        #expect(counted.items.count == 1)
        #expect(counted.count == 120)
        #expect(try OrderedJSONParser.page(Array("[]".utf8)).items.isEmpty)
    }

    @Test func refusesAPageThatIsNotItemsAndSaysWhy() {
        for (text, why) in [
            ("[{\"id\":\"a\"},2]", "item 2 is not an object"),
            ("{\"count\":3}", "an object without 'results'"),
            ("{\"results\":{}}", "'results' is not an array"),
            ("{\"results\":[],\"count\":-1}", "'count' is not a whole number"),
            ("[] []", "text after the end of the page"),
            ("\"rows\"", "neither an array nor an object"),
            ("[{\"id\":\"a\"}", "expected ',' or ']' in an array"),
        ] {
            let error = #expect(throws: OrderedJSONParser.Failure.self, "\(text)") {
                try OrderedJSONParser.page(Array(text.utf8))
            }
            #expect(error?.message.hasPrefix(why) == true, "\(text): \(error?.message ?? "")")
        }
    }
}
