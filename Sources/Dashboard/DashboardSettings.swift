import Foundation
import Storage
import SyncClient
import Synchronization

/// The dashboard's own settings (`settings.json` in the data folder): which remote to use, how
/// large pull pages are and how many operations a push keeps on the wire. Offline mode lives in the
/// sync store itself.
struct DashboardSettings: Codable, Sendable, Equatable {
    /// `nil` means the embedded table service.
    var remoteURL: String?
    /// Read from files an earlier todosync wrote, and moved beside the store at start (see
    /// `SyncContext.applicationKey`); never written.
    var applicationKey: String?
    var pageSize: Int = 50
    /// nil: ``SyncConfiguration/defaultPushWindow`` (optional, so that older files still decode).
    var pushWindow: Int?
    /// nil: `auto` (see ``SyncConfiguration/tableProtocol``).
    var tableProtocol: ProtocolChoice?
    /// Seconds between automatic syncs; nil or 0: off (see ``AutoSync``).
    var autoSyncInterval: Double?

    static let fileName = "settings.json"
}

/// Reads and writes ``DashboardSettings`` atomically.
final class SettingsFile: Sendable {
    private let url: URL
    private let current: Mutex<DashboardSettings>

    init(folder: URL) {
        url = folder.appendingPathComponent(DashboardSettings.fileName)
        let saved = (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(DashboardSettings.self, from: $0) }
        current = Mutex(saved ?? DashboardSettings())
    }

    var settings: DashboardSettings { current.withLock { $0 } }

    /// Saves new settings, on disk when this returns; the old file stays whole if writing fails.
    func save(_ settings: DashboardSettings) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try DurableFile.write(try encoder.encode(settings), to: url)
        current.withLock { $0 = settings }
    }
}
