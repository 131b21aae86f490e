import Foundation
import Logging

/// The logger of the HTTP layer (label `todosync.http`).
enum ServerLog {
    static let logger = Logger(label: "todosync.http")
}

/// Logs one line per request: method, path, status and milliseconds taken.
public struct RequestLogger: Middleware {
    private let logger: Logger

    public init(logger: Logger = Logger(label: "todosync.requests")) {
        self.logger = logger
    }

    public func finish(_ request: Request, _ response: inout Response) {
        let elapsed = ContinuousClock.now - request.receivedAt
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        logger.info(
            "\(request.method) \(request.path) \(response.status.code) \(String(format: "%.1f", milliseconds))ms")
    }
}
