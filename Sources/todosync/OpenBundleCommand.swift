import ArgumentParser
import Dashboard
import Foundation
import HTTPServer

/// `todosync open-bundle FILE`: the dashboard over a support bundle, read-only.
struct OpenBundleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open-bundle",
        abstract: "Serve the dashboard over a support bundle, read-only (it never syncs).",
        discussion: """
            FILE is a bundle made by `todosync client bundle --out FILE` or Settings → Export support bundle. \
            Every page and /api GET works as on the device; every POST answers 403. The bundle is unpacked \
            into a temporary folder, removed when the dashboard stops; FILE is not changed.
            """)

    @Argument(help: "The support bundle (.zip).") var file: String
    @OptionGroup var listen: ListenOptions
    @OptionGroup var allowedHosts: AllowedHostOptions
    @OptionGroup var access: AccessOptions
    @OptionGroup var resources: ResourceOptions

    func run() async throws {
        let signals = await trapTerminationSignals()
        let opened: SupportBundle.Opened
        do {
            opened = try SupportBundle.open(URL(fileURLWithPath: file))
        } catch {
            FileHandle.standardError.write(Data(("error: " + error.description + "\n").utf8))
            throw ExitCode.failure
        }
        defer { try? FileManager.default.removeItem(at: opened.folder) }
        let dashboard: Dashboard
        do {
            dashboard = try await Dashboard.serve(
                opened, host: listen.host, port: listen.port, resources: try resources.locate(),
                allowedHosts: allowedHosts.names, accessTokens: try access.tokens())
        } catch let error as HTTPServerError {
            throw ValidationError("\(error) (see --port and --host)")
        }
        let made = ISO8601DateFormatter().string(from: opened.manifest.createdAt)
        announce(
            "todosync support bundle \(file) (made \(made) by todosync \(opened.manifest.todosyncVersion)), "
                + "read-only: \(dashboardAddress(dashboard))  (Ctrl-C stops it)")
        try await runUntilTerminated([dashboard], signals: signals)
        announce("todosync open-bundle stopped.")
    }
}
