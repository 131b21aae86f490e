import ArgumentParser
import Dashboard

/// `todosync`: the offline-sync dashboard, the table service and the scripting client.
@main
struct Todosync: AsyncParsableCommand {
    static let version = Dashboard.version

    static let configuration = CommandConfiguration(
        commandName: "todosync",
        abstract: "Offline-first todo sync: a web dashboard, a table service and a sync client.",
        version: version,
        subcommands: [
            DashboardCommand.self, ServeCommand.self, ClientCommand.self, DemoCommand.self, ProxyCommand.self,
            DoctorCommand.self, OpenBundleCommand.self, RestoreCommand.self,
        ],
        defaultSubcommand: DashboardCommand.self
    )
}
