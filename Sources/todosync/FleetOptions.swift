import ArgumentParser
import Foundation
import TableService

/// `serve`'s fleet flags: who may see the devices, when a device counts as behind, stalled or
/// offline, and where stall alerts go (see `docs/fleet.md`).
struct FleetOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The key of the service's pages and /service/api (also TODOSYNC_ADMIN_KEY); without it they answer "
                + "this machine only.", valueName: "key"))
    var adminKey: String?
    @Option(help: ArgumentHelp("Read the admin key from this file (its first line).", valueName: "file"))
    var adminKeyFile: String?
    @Option(help: "Seconds behind the head after which an advancing device counts as behind.")
    var behindAfter: Int64 = 60
    @Option(help: "Seconds a device may keep asking from one position, with rows past it, before it is stalled.")
    var stalledAfter: Int64 = 120
    @Option(help: "Seconds without contact after which a device is offline.")
    var offlineAfter: Int64 = 86_400
    @Option(help: ArgumentHelp("POST stall alerts (and recoveries) as JSON to this address.", valueName: "url"))
    var alertWebhook: String?

    func validate() throws {
        for (flag, value) in [
            ("--behind-after", behindAfter), ("--stalled-after", stalledAfter), ("--offline-after", offlineAfter),
        ]
        where value < 1 {
            throw ValidationError("\(flag) must be at least 1 second.")
        }
        if adminKey != nil, adminKeyFile != nil {
            throw ValidationError("Give --admin-key or --admin-key-file, not both.")
        }
        if let alertWebhook {
            guard let url = URL(string: alertWebhook), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else {
                throw ValidationError(
                    "--alert-webhook must be an http:// or https:// address; '\(alertWebhook)' is not.")
            }
        }
    }

    /// The admin key from the flag, the file or the environment, in that order; nil for none.
    func key() throws -> String? {
        var key = adminKey
        if let adminKeyFile {
            do {
                key =
                    try String(contentsOfFile: adminKeyFile, encoding: .utf8)
                    .split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            } catch {
                throw ValidationError("--admin-key-file: cannot read \(adminKeyFile): \(error.localizedDescription)")
            }
        }
        key = key ?? ProcessInfo.processInfo.environment["TODOSYNC_ADMIN_KEY"]
        guard let key else { return nil }
        let trimmed = key.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 16 else {
            throw ValidationError("The admin key is too short: give at least 16 characters (--admin-key).")
        }
        return trimmed
    }

    /// These options applied to a service's configuration.
    func apply(to configuration: inout TableService.Configuration) throws {
        configuration.adminKey = try key()
        configuration.fleetThresholds = FleetThresholds(
            behindAfterSeconds: behindAfter, stalledAfterSeconds: stalledAfter, offlineAfterSeconds: offlineAfter)
        configuration.alertWebhook = alertWebhook.flatMap(URL.init(string:))
    }
}
