import ArgumentParser
import Dashboard
import HTTPServer
import Views

/// `todosync [dashboard]`: the web dashboard on 127.0.0.1:8080.
struct DashboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Start the web dashboard (the default command)."
    )

    @OptionGroup var listen: ListenOptions
    @OptionGroup var resources: ResourceOptions

    @Option(help: "Folder for the local store and settings.")
    var dataDir = "data"

    func run() async throws {
        let folders = try resources.locate()
        let site = try DashboardSite(resources: folders, host: listen.host, port: listen.port)
        let server = try listen.start(site.router())
        announce("todosync dashboard: open \(server.url)/  (Ctrl-C stops it)")
        await waitForTermination()
        server.stop()
        announce("todosync stopped.")
    }
}
