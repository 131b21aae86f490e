import Foundation
import HTTPServer
import HTTPTypes
import Logging
import SyncClient

/// `/settings/bundle`: what a support bundle of this device holds (a preview), and its export
/// (`POST`, a download of one `.zip` file; see ``SupportBundle``).
struct SupportBundleController: Sendable {
    let environment: DashboardEnvironment

    func addRoutes(to router: inout Router) {
        router.get("/settings/bundle") { request in try preview(request) }
        router.post("/settings/bundle") { _ in try export() }
        // A service's admin may ask for this device's bundle (docs/fleet.md): the same one, uploaded.
        let context = environment.context
        environment.context.reporting.onBundleRequest { [self] in
            guard let settings = try? bundleSettings() else { return }
            await SupportBundle.upload(
                context, settings: settings, secrets: [context.applicationKey], madeBy: "dashboard",
                version: Dashboard.version, logger: Logger(label: "todosync.dashboard"))
        }
    }

    private func preview(_ request: Request) throws -> Response {
        let context = environment.context
        let snapshot = try storeCall { () throws(SyncError) in try context.snapshotPreview() }
        let settings = try bundleSettings()
        let view = SupportBundleView(
            tables: snapshot.tables.map { .init(name: $0.name, rows: $0.rows) }, operations: snapshot.operations,
            conflicts: snapshot.conflicts, exchanges: snapshot.exchanges, journalEntries: snapshot.journalEntries,
            storeSize: ByteCountFormatter.string(fromByteCount: Int64(snapshot.bytes), countStyle: .file),
            remote: settings.remoteURL ?? "the embedded service", version: Dashboard.version,
            removed: SupportBundle.removed.joined(separator: ", "))
        return environment.renderer.page("settings/bundle", request, section: .settings, view)
    }

    private func export() throws -> Response {
        let context = environment.context
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("todosync-export-\(UUID().uuidString).zip")
        defer { try? FileManager.default.removeItem(at: file) }
        let settings = try bundleSettings()
        do {
            try SupportBundle.write(
                context, settings: settings, secrets: [context.applicationKey],
                madeBy: "dashboard", version: Dashboard.version, to: file)
        } catch {
            throw HTTPError(.internalServerError, error.description)
        }
        let data = try Data(contentsOf: file)
        var response = Response(body: data)
        response.headers[.contentType] = "application/zip"
        response.headers[.contentDisposition] =
            "attachment; filename=\"\(Self.fileName(at: Date()))\""
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `todosync-bundle-20260131-142500.zip` (UTC).
    static func fileName(at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "todosync-bundle-\(formatter.string(from: date)).zip"
    }

    private func bundleSettings() throws -> SupportBundle.Settings {
        let context = environment.context
        let saved = environment.settings.settings
        return SupportBundle.Settings(
            remoteURL: saved.remoteURL, pageSize: saved.pageSize, pushWindow: saved.pushWindow,
            tableProtocol: saved.tableProtocol,
            syncedTables: try storeCall { () throws(SyncError) in try context.syncedTables() },
            offline: context.isOffline, applicationKeyWasSet: context.applicationKey != nil,
            signInTokenWasSet: context.authTokenHint != nil)
    }
}

/// The bundle page's content (`/settings/bundle`).
struct SupportBundleView: Encodable, Sendable {
    struct Table: Encodable, Sendable {
        var name: String
        var rows: Int
    }
    var tables: [Table]
    var operations: Int
    var conflicts: Int
    var exchanges: Int
    var journalEntries: Int
    var storeSize: String
    var remote: String
    var version: String
    var removed: String
}
