import Foundation
import HTTPServer
import HTTPTypes
import SyncProtocol

/// Encodes the dashboard's typed values as JSON answers (sorted keys, ISO 8601 dates).
enum JSONAnswer {
    static let encoder = JSONEncoder.todosync()

    /// `value` as a JSON response.
    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        do {
            return .json(data: try encoder.encode(value), status: status)
        } catch {
            // Only a non-finite number fails to encode; the dashboard's values hold none.
            return .jsonError("The answer could not be written as JSON: \(error).", status: .internalServerError)
        }
    }
}
