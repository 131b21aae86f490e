import Foundation

/// What a restore would change (`todosync restore --plan`): per table, the rows that would vanish,
/// go back to older values or come back, and the devices that synced past the time.
public struct RestorePlan: Sendable, CustomStringConvertible {
    public struct TableChange: Sendable, Equatable {
        public let table: String
        /// Rows the backup's newest state has and the restored one will not (added after the time).
        public let vanish: Int
        /// Rows whose version will be an older one (changed or deleted after the time).
        public let older: Int
        /// Rows removed for good after the time, which the restore brings back.
        public let comeBack: Int
    }

    public struct Device: Sendable, Equatable {
        public let id: String
        public let user: String?
        public let lastContact: Int64
    }

    public let database: String
    public let backupFolder: String
    /// The time asked for (nil: latest).
    public let asked: Int64?
    /// The newest commit the restored database holds.
    public let restoredTo: Int64
    /// The newest commit the backup holds.
    public let newest: Int64
    public let tables: [TableChange]
    public let devices: [Device]

    public var description: String {
        var lines = [
            "Restore of \(database) from \(backupFolder) to \(asked.map(RestoreTime.text) ?? "latest"):",
            "  it would hold every commit shipped by \(RestoreTime.text(restoredTo))",
            "  (the backup's newest commit: \(RestoreTime.text(newest)))",
            "",
        ]
        if tables.allSatisfy({ $0.vanish == 0 && $0.older == 0 && $0.comeBack == 0 }) {
            lines.append("No row changes: the restored database holds the backup's newest rows.")
        } else {
            let headers = ["table", "rows that vanish", "rows back to older values", "rows that come back"]
            let rows = tables.map { [$0.table, String($0.vanish), String($0.older), String($0.comeBack)] }
            let widths = headers.indices.map { column in
                ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
            }
            func line(_ cells: [String]) -> String {
                cells.indices.map { column in
                    let cell = cells[column]
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 0 ? cell + pad : pad + cell
                }.joined(separator: "   ")
            }
            lines.append("  " + line(headers))
            for row in rows { lines.append("  " + line(row)) }
        }
        lines.append("")
        if devices.isEmpty {
            lines.append("No device synced after \(RestoreTime.text(asked ?? restoredTo)).")
        } else {
            lines.append(
                "\(devices.count) device(s) synced after \(RestoreTime.text(asked ?? restoredTo)) and may hold rows the "
                    + "restored service will not have:")
            for device in devices {
                lines.append(
                    "  \(device.id)\(device.user.map { "  (user \($0))" } ?? "")  last contact "
                        + RestoreTime.text(device.lastContact))
            }
        }
        lines.append("")
        lines.append("Nothing was changed. Run the same command without --plan to restore.")
        return lines.joined(separator: "\n")
    }
}
