import Foundation
import SyncProtocol
import Testing

/// Defects the hostile-input fuzzing found in the service, one test each.
@Suite struct ServiceDefectTests {
    @Test func queryThatIsNotUTF8IsAnsweredInJSONToAJSONClient() async throws {
        let harness = try ReliabilityHarness()
        defer { harness.stop() }
        let reply = try await harness.get("/tables/todoitem?$filter=%FF%FE")
        #expect(reply.status == 400)
        let object = try JSONDecoder().decode([String: JSONValue].self, from: reply.body)
        #expect(object["error"]?.stringValue?.contains("UTF-8") == true)
    }
}
