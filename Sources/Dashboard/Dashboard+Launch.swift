import Foundation
import HTTPServer
import TableService

extension Dashboard {
    /// The name of the embedded service's table.
    public static let embeddedTables = ["todoitem"]

    /// Where the embedded service shows its own page.
    public static let embeddedServicePagePath = "/service"

    /// The composition root of `todosync` (the dashboard command, the demo's devices, and tests):
    /// the dashboard, and — unless `configuration` names another service as its remote — a table
    /// service embedded in the dashboard's own server, its page at `/service`.
    ///
    /// - Parameters:
    ///   - embeddedDatabase: where the embedded service keeps its tables; nil for
    ///     `service.sqlite` in the data folder.
    /// - Throws: ``HTTPServerError`` when the address cannot be bound, `SyncError` when the store
    ///   refuses the remote switch, and the embedded service's ``TableServiceError``.
    public static func launch(
        _ configuration: DashboardConfiguration, embeddedDatabase: TableService.Database? = nil
    ) async throws -> Dashboard {
        if case .url = configuration.remote { return try await start(configuration) }
        try FileManager.default.createDirectory(
            at: configuration.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let database =
            embeddedDatabase ?? .sqlite(path: configuration.dataDirectory.appendingPathComponent("service.sqlite").path)
        let service = try TableService(
            configuration: .init(
                database: database, tables: embeddedTables, pagePath: embeddedServicePagePath,
                templatesFolder: configuration.resources.templatesFolder))
        do {
            try await service.ready()
            let dashboard = try await start(configuration, servicePagePath: embeddedServicePagePath) { router in
                service.addRoutes(to: &router)
            }
            dashboard.onStop { service.endSubscriptions() }
            return dashboard
        } catch {
            service.close()
            throw error
        }
    }
}
