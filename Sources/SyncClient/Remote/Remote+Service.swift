import Foundation

/// What a context asks of its service besides a sync: whether it answers, the support bundle its
/// admin asked for, and the options a protocol doctor run needs to probe it as a sync does.
extension Remote {
    /// See ``SyncContext/remoteAnswers()``; `table` is the one asked for no rows.
    func answers(table: String) async -> Bool {
        guard !monitor.offline, let transport else { return false }
        do {
            _ = try await transport.send(
                .get, transport.path(table: table), query: [("$top", "0")], for: .reachability(table: table))
            return true
        } catch {
            return false
        }
    }

    /// See ``SyncContext/uploadSupportBundle(_:)``.
    func uploadSupportBundle(_ zip: Data) async throws(SyncError) {
        guard let transport else { throw .noRemote }
        // The installation id is a UUID: nothing in it needs escaping in a path.
        let reply = try await transport.send(
            .post, "/devices/\(installationID)/bundle", body: zip, contentType: "application/zip", for: .supportBundle)
        guard (200..<300).contains(reply.status.code) else {
            throw .badResponse("The service refused the support bundle (\(reply.status.code)).")
        }
    }

    /// See ``SyncContext/doctorOptions(table:readOnly:)``.
    func doctorOptions(table: String, readOnly: Bool) -> ProtocolDoctor.Options? {
        guard let remote = monitor.remote, let url = URL(string: remote) else { return nil }
        let credentials = try? credentialsFile.load()
        var options = ProtocolDoctor.Options(
            url: url, table: table, applicationKey: credentials?.applicationKey, readOnly: readOnly,
            protocolChoice: monitor.protocolChoice)
        options.authTokenCommand = tokenSupply?.command
        options.authToken = tokenSupply == nil ? credentials?.authToken : nil
        options.authStyle = authStyleChoice
        options.caFile = caFile
        options.allowPlainHTTP = allowPlainHTTP
        return options
    }
}
