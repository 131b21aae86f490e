import ArgumentParser
import Foundation
import TableService

/// `todosync restore`: a SQLite service's database rebuilt from its backup folder as of a time.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a SQLite service's database from its backup folder (serve --backup-dir) to a time.",
        discussion: """
            With --plan, prints per table how many rows would vanish, go back to older values or come back, \
            and the devices that synced after the time; changes nothing. Without it, builds the database as of \
            the time beside --database, checks it, begins a new epoch (clients reconcile), keeps the file that \
            was there as FILE.before-restore-STAMP and puts the new one in its place: all or nothing. Stop the \
            service first. Serve the restored database with a new --backup-dir.
            """
    )

    @Option(help: ArgumentHelp("The backup folder that `serve --backup-dir` writes.", valueName: "folder"))
    var backupDir: String

    @Option(help: ArgumentHelp("The SQLite file to restore (need not exist).", valueName: "file"))
    var database: String

    @Option(
        help: ArgumentHelp(
            "The time to go back to: ISO 8601 with its offset (2026-12-07T09:30:00Z), or latest.", valueName: "time"),
        transform: { text in
            guard let time = RestoreTime(text) else {
                throw ValidationError(
                    "--to: '\(text)' is not a time: give ISO 8601 with an offset, such as 2026-12-07T09:30:00Z, "
                        + "or latest.")
            }
            return time
        })
    var to: RestoreTime

    @Flag(help: "Print what the restore would change, and change nothing.")
    var plan = false

    func run() throws {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        do {
            if plan {
                print(try ServiceRestore.plan(backupFolder: backupDir, database: database, to: to, now: now))
                return
            }
            let outcome = try ServiceRestore.restore(backupFolder: backupDir, database: database, to: to, now: now)
            print(
                "Restored \(database) to \(RestoreTime.text(outcome.restoredTo)) (\(outcome.segments) segment(s) applied)."
            )
            if let kept = outcome.keptAs { print("The file that was there is kept as \(kept).") }
            print("New epoch \(outcome.epoch.id): clients that know epochs reconcile at their next sync.")
            print("Serve it with a new --backup-dir: a restored database is a new one for backups.")
        } catch {
            throw ValidationError(error.description)
        }
    }
}
