import Foundation

extension SyncContext {
    /// Options for a protocol doctor run on the service this store syncs with, carrying what its
    /// syncs send (the key, the token or its command, how the token is sent) and trust (the CA file,
    /// plain HTTP allowed or not), so that a secured service is probed as it is synced; nil when the
    /// store has no remote.
    public nonisolated func doctorOptions(table: String, readOnly: Bool) -> ProtocolDoctor.Options? {
        guard let remote = remoteURL, let url = URL(string: remote) else { return nil }
        let credentials = try? credentialsFile.load()
        var options = ProtocolDoctor.Options(
            url: url, table: table, applicationKey: credentials?.applicationKey, readOnly: readOnly,
            protocolChoice: protocolChoice)
        options.authTokenCommand = tokenSupply?.command
        options.authToken = tokenSupply == nil ? credentials?.authToken : nil
        options.authStyle = authStyleChoice
        options.caFile = caFile
        options.allowPlainHTTP = allowPlainHTTP
        return options
    }
}
