import Foundation
import Views

extension Dashboard {
    /// Serves an opened support bundle (see ``SupportBundle/open(_:under:)``) read-only: every page
    /// and `/api` GET as on the device, every other request 403 "this is a read-only support
    /// bundle", and no sync ever (the remote it names is shown, never contacted).
    ///
    /// - Throws: ``HTTPServer/HTTPServerError`` when the address cannot be bound, `SyncError` when
    ///   the store cannot be opened.
    public static func serve(
        _ bundle: SupportBundle.Opened, host: String = "127.0.0.1", port: Int = 0, resources: ResourceFolders,
        allowedHosts: [String] = [], accessTokens: [String: AccessRole] = [:]
    ) async throws -> Dashboard {
        let saved = bundle.settings
        let settings = DashboardSettings(
            remoteURL: saved.remoteURL, applicationKey: nil, pageSize: saved.pageSize ?? 50,
            pushWindow: saved.pushWindow, tableProtocol: saved.tableProtocol)
        try SettingsFile(folder: bundle.folder).save(settings)
        var configuration = DashboardConfiguration(
            host: host, port: port, dataDirectory: bundle.folder, resources: resources,
            deviceName: "Support bundle (read-only)", allowedHosts: allowedHosts)
        configuration.isReadOnlyBundle = true
        configuration.accessTokens = accessTokens
        return try await start(configuration)
    }
}
