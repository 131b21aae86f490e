import SyncProtocol

extension HTTPReply {
    /// A page answer that is not a success, as the error that stops the pull (or verify) reading pages.
    func checkPage(table: String) throws(SyncError) {
        guard status.kind != .successful else { return }
        if let reason = PushDecision.stopReason(status: status, message: message) {
            throw .stopped(reason)
        }
        if status == .notFound { throw .serviceHasNoTable(table) }
        throw .badResponse("HTTP \(status.code): \(message)")
    }
}
