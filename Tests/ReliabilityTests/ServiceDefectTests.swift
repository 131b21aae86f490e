import Foundation
import SyncProtocol
import Testing

/// Defects the hostile-input fuzzing found in the service, one test each.
@Suite struct ServiceDefectTests {
    @Test func queryThatIsNotUTF8IsAnsweredInJSONToAJSONClient() async throws {
        try await withReliabilityHarness { harness in
            let reply = try await harness.get("/tables/todoitem?$filter=%FF%FE")
            #expect(reply.status == 400)
            let object = try JSONDecoder().decode([String: JSONValue].self, from: reply.body)
            #expect(object["error"]?.stringValue?.contains("UTF-8") == true)
        }
    }

    @Test func longOrChainOfIdsIsAnsweredNotFailed() async throws {
        try await withReliabilityHarness { harness in
            for index in 0..<3 {
                _ = try await harness.send(
                    .post, "/tables/todoitem", body: Data(#"{"id":"r\#(index)","text":"t"}"#.utf8))
            }
            let filter = (0..<300).map { "id eq 'r\($0)'" }.joined(separator: " or ")
            let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let reply = try await harness.get("/tables/todoitem?$filter=\(encoded)")
            #expect(reply.status == 200)
            #expect(try JSONDecoder().decode([Item].self, from: reply.body).count == 3)
        }
    }

    @Test func filterTooComplexForSQLiteIsA400WithAMessage() async throws {
        try await withReliabilityHarness { harness in
            _ = try await harness.send(.post, "/tables/todoitem", body: Data(#"{"id":"r0","text":"t"}"#.utf8))
            let filters = [
                Array(repeating: "complete", count: 1100).joined(separator: " and "),
                String(repeating: "not ", count: 60) + "(text eq 'a')",
                String(repeating: "(", count: 60) + "text eq 'a'" + String(repeating: ")", count: 60),
            ]
            for filter in filters {
                var allowed = CharacterSet.alphanumerics
                allowed.insert(charactersIn: "()'")
                let encoded = filter.addingPercentEncoding(withAllowedCharacters: allowed)!
                let reply = try await harness.get("/tables/todoitem?$filter=\(encoded)")
                #expect([200, 400].contains(reply.status), "\(filter.prefix(40))…: HTTP \(reply.status)")
                if reply.status == 400 {
                    let object = try JSONDecoder().decode([String: JSONValue].self, from: reply.body)
                    #expect(object["error"]?.stringValue?.isEmpty == false)
                }
            }
        }
    }
}
