import Foundation
import HTTPTypes
import SyncProtocol

/// One answer from the table service.
struct HTTPReply: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Data

    /// The server's message: `{"error": "..."}`, or the body's text.
    var message: String {
        // Our parser, not `JSONDecoder`: this is read for every 412 a push meets, where Foundation's
        // decoder took 2 % of a push whose every update met one (conflict-bench).
        if let members = try? OrderedJSONParser.object(Array(body), maximumDepth: ItemCoding.maximumDepth) {
            let object = Dictionary(members, uniquingKeysWith: { _, last in last })
            if let error = object["error"]?.stringValue ?? object["message"]?.stringValue { return error }
        }
        return String(decoding: body.prefix(300), as: UTF8.self)
    }
}
