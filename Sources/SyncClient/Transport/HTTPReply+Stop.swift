import HTTPTypes
import SyncProtocol

/// Why an answer of the service stops a push, a pull or a verify: the one reading of a reply's
/// status and body that every job shares.
extension HTTPReply {
    /// Why this answer stops the job (nil: it does not); see ``StopReason/init(answer:message:)``.
    var stopReason: StopReason? { StopReason(answer: status, message: message) }

    /// A page answer (pull, verify, reconcile) that is not a success, as the error that stops the
    /// reading of pages: a ``stopReason``, a table the service does not have (404), or an answer
    /// that is no page.
    func checkPage(table: String) throws(SyncError) {
        guard status.kind != .successful else { return }
        if let stopReason { throw .stopped(stopReason) }
        if status == .notFound { throw .serviceHasNoTable(table) }
        throw .badResponse("HTTP \(status.code): \(message)")
    }
}

extension StopReason {
    /// Why an answer with `status` stops a job, push, pull or verify alike (nil: it does not):
    /// access refused (401, 403), a timeout (408), overload or a failure of the service (429, 5xx).
    /// `message` is the service's own (``HTTPReply/message``).
    init?(answer status: HTTPResponse.Status, message: String) {
        switch status.code {
        case 401, 403: self = .notAuthorized(status: status, message: message)
        case 408: self = .timedOut
        case 429, 500...: self = .serverError(status: status, message: message)
        default: return nil
        }
    }
}
