import ArgumentParser
import Dashboard
import Foundation
import SyncClient

/// `client bundle --out FILE`: a support bundle of the store (see `SupportBundle`).
struct ClientBundle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Write a support bundle of the store: one file to send to someone helping you.",
        discussion: """
            It holds a consistent snapshot of the store (rows, queue, conflicts, journal, flight recorder), the \
            settings and versions, with the application key, sign-in token, cookies and any JWT-looking value \
            removed. Open it with `todosync open-bundle FILE`. FILE is replaced only once the bundle is whole.
            """)

    @OptionGroup var options: ClientSubcommandOptions
    @Option(help: ArgumentHelp("Where to write the bundle (a .zip file).", valueName: "file")) var out: String

    func validate() throws {
        guard !out.isEmpty else { throw ValidationError("--out needs a file name, such as support.zip.") }
    }

    func run() async throws {
        try await options.run { context in
            let settings = SupportBundle.Settings(
                remoteURL: context.remoteURL, pageSize: nil, pushWindow: await context.pushWindow,
                tableProtocol: context.protocolChoice, syncedTables: try context.syncedTables(),
                offline: context.isOffline, applicationKeyWasSet: options.appKey != nil,
                signInTokenWasSet: context.authTokenHint != nil)
            let manifest: SupportBundle.Manifest
            do {
                manifest = try SupportBundle.write(
                    context, settings: settings, secrets: [options.appKey, options.authToken], madeBy: "client",
                    version: Todosync.version, to: URL(fileURLWithPath: out))
            } catch {
                FileHandle.standardError.write(Data(("error: --out: \(error)\n").utf8))
                throw ExitCode.failure
            }
            let store = manifest.store
            options.output(
                "Wrote \(out): \(store.tables.count) table\(store.tables.count == 1 ? "" : "s"), "
                    + "\(store.operations) queued change\(store.operations == 1 ? "" : "s"), "
                    + "\(store.exchanges) recorded exchange\(store.exchanges == 1 ? "" : "s"); "
                    + "removed: \(SupportBundle.removed.joined(separator: ", ")).",
                json: manifest)
        }
    }
}
